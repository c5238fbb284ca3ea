/**
 * One operation of an OpenAPI document -> an arbitrary of raw HTTP requests: valid ones and ones
 * broken in one way (a bad parameter, a 600-character id, a bad body, malformed JSON, invalid UTF-8,
 * a wrong content type, a duplicated query key). Headers are pairs so that a name can repeat.
 */
import fc from 'fast-check';
import type { Operation, Parameter, Schema } from './openapi.js';
import {
  type Examples,
  HOSTILE_STRINGS,
  invalidObject,
  invalidValue,
  validNamed,
  validValue,
} from './values.js';

export interface RequestDraft {
  readonly method: string;
  /** Path and query as sent on the request line, already percent-encoded. */
  readonly target: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body?: Buffer;
  /** What was done to the request, for failure messages. */
  readonly mutation: string;
}

export type BodyMutation =
  | 'valid'
  | 'invalid-field'
  | 'malformed-json'
  | 'invalid-utf8'
  | 'wrong-content-type'
  | 'missing-body';

export type ParamMutation = 'valid' | 'invalid' | 'overlong' | 'invalid-utf8' | 'duplicate-query' | 'missing';

/** Bodies that are not the JSON they claim to be, or JSON that parsers disagree on. */
const MALFORMED_JSON: readonly string[] = [
  '',
  '{',
  '{"a":',
  '{"a":1,}',
  "{'a':1}",
  'null',
  '[]',
  '"text"',
  '1e19',
  '{"a":1e400}',
  '{"__proto__":{"polluted":1}}',
  '{"a":1,"a":2}',
  '\uFEFF{}',
  `${'['.repeat(2000)}${']'.repeat(2000)}`,
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
];

/** Byte sequences that are not UTF-8 (a lone continuation byte, an overlong `/`, a truncated sequence). */
const INVALID_UTF8: readonly Buffer[] = [
  Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
  Buffer.from([0x7b, 0x22, 0xc0, 0xaf, 0x22, 0x3a, 0x31, 0x7d]),
  Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe2, 0x82, 0x22, 0x7d]),
  Buffer.from([0x80]),
];
const INVALID_UTF8_ESCAPES: readonly string[] = ['%FF', '%C0%AF', '%E2%82', '%ED%A0%80', 'a%ZZ', '%'];

/** Percent-encodes a value; a lone surrogate (not encodable as UTF-8) is sent as U+FFFD. */
const encode = (value: unknown): string =>
  encodeURIComponent(
    (typeof value === 'string' ? value : (JSON.stringify(value) ?? '')).replace(/\p{Cs}/gu, '\ufffd'),
  );

function paramValue(
  parameter: Parameter,
  mutation: ParamMutation,
  examples: Examples,
): fc.Arbitrary<string | undefined> {
  switch (mutation) {
    case 'valid':
    case 'duplicate-query':
      return validNamed(parameter.name, parameter.schema, examples).map(encode);
    case 'invalid':
      return fc.oneof(invalidValue(parameter.schema), fc.constantFrom(...HOSTILE_STRINGS)).map(encode);
    case 'overlong':
      return fc.constantFrom('a'.repeat(600), '1'.repeat(700), 'b'.repeat(5000));
    case 'invalid-utf8':
      return fc.constantFrom(...INVALID_UTF8_ESCAPES);
    case 'missing':
      return fc.constant(undefined);
  }
}

interface Params {
  readonly target: string;
  readonly headers: [string, string][];
}

/**
 * The request line target and header parameters, with `mutation` applied to one chosen parameter.
 * `requiredOnly` (a known-good sample): optional parameters are left out, since a random value of
 * one may refuse the request on its own (an `If-Match` the resource does not have is a 412).
 */
function params(
  operation: Operation,
  mutation: ParamMutation,
  examples: Examples,
  requiredOnly = false,
): fc.Arbitrary<Params> {
  const list = operation.parameters.filter((p) => p.in !== 'cookie' && (!requiredOnly || p.required));
  if (list.length === 0) return fc.constant({ target: operation.path, headers: [] });
  return fc.nat({ max: list.length - 1 }).chain((victim) =>
    fc
      .tuple(
        ...list.map((p, i) => {
          if (i === victim) return paramValue(p, mutation, examples);
          // Optional parameters are sometimes left out.
          const value = paramValue(p, 'valid', examples);
          return p.required ? value : fc.option(value, { nil: undefined });
        }),
      )
      .map((values) => {
        let path = operation.path;
        const query: string[] = [];
        const headers: [string, string][] = [];
        list.forEach((p, i) => {
          const value = values[i];
          if (p.in === 'path') path = path.replace(`{${p.name}}`, value ?? '');
          else if (value === undefined) return;
          else if (p.in === 'query') {
            query.push(`${encodeURIComponent(p.name)}=${value}`);
            if (i === victim && mutation === 'duplicate-query')
              query.push(`${encodeURIComponent(p.name)}=${value}`);
          } else headers.push([p.name, decodeHeader(value)]);
        });
        return { target: query.length > 0 ? `${path}?${query.join('&')}` : path, headers };
      }),
  );
}

/** Header values are sent raw: undo the percent-encoding and keep them to visible Latin-1. */
function decodeHeader(value: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    decoded = value;
  }
  return decoded.replace(/[^\x20-\x7e]/g, '?');
}

function formEncode(value: unknown): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return encode(value);
  return Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${encode(k)}=${encode(v)}`)
    .join('&');
}

interface Body {
  readonly body?: Buffer;
  readonly contentType?: string;
}

function body(
  operation: Operation,
  mutation: BodyMutation,
  examples: Examples,
  samples: readonly unknown[],
  samplesOnly = false,
): fc.Arbitrary<Body> {
  const spec = operation.body;
  if (!spec) return fc.constant({});
  const mediaType = spec.mediaType;
  const serialize = (value: unknown): Body => ({
    body: Buffer.from(mediaType.includes('json') ? (JSON.stringify(value) ?? 'null') : formEncode(value)),
    contentType: mediaType,
  });
  switch (mutation) {
    case 'valid': {
      const drawn = validValue(spec.schema, 0, examples);
      if (samples.length === 0) return drawn.map(serialize);
      if (samplesOnly) return fc.constantFrom(...samples).map(serialize);
      return fc
        .oneof({ arbitrary: drawn, weight: 1 }, { arbitrary: fc.constantFrom(...samples), weight: 3 })
        .map(serialize);
    }
    case 'invalid-field':
      return (
        isObject(spec.schema) ? invalidObject(spec.schema, 0, examples) : invalidValue(spec.schema)
      ).map(serialize);
    case 'malformed-json':
      return fc
        .constantFrom(...MALFORMED_JSON)
        .map((text) => ({ body: Buffer.from(text), contentType: mediaType }));
    case 'invalid-utf8':
      return fc.constantFrom(...INVALID_UTF8).map((bytes) => ({ body: bytes, contentType: mediaType }));
    case 'wrong-content-type':
      return fc
        .tuple(
          validValue(spec.schema),
          fc.constantFrom(
            'text/plain',
            'application/xml',
            'multipart/form-data; boundary=x',
            'application/json; charset=latin1',
            'application/x-www-form-urlencoded',
            'application/json',
            '',
            ';;;',
          ),
        )
        .map(([value, contentType]) => ({ body: Buffer.from(JSON.stringify(value) ?? 'null'), contentType }));
    case 'missing-body':
      return fc.constant({});
  }
}

function isObject(schema: Schema): boolean {
  return schema.type === 'object' || schema.properties !== undefined;
}

/**
 * Raw requests for `operation`, about half valid and half broken in one way. `samples` are known-good
 * bodies of the operation (fields that must agree with each other), three in four valid bodies.
 */
export function requestsFor(
  operation: Operation,
  examples: Examples = {},
  samples: readonly unknown[] = [],
): fc.Arbitrary<RequestDraft> {
  const paramMutations: ParamMutation[] =
    operation.parameters.length > 0
      ? ['invalid', 'overlong', 'invalid-utf8', 'duplicate-query', 'missing']
      : [];
  const bodyMutations: BodyMutation[] = operation.body
    ? ['invalid-field', 'malformed-json', 'invalid-utf8', 'wrong-content-type', 'missing-body']
    : [];
  const plan = fc.oneof(
    { arbitrary: fc.constant<[ParamMutation, BodyMutation]>(['valid', 'valid']), weight: 2 },
    ...(paramMutations.length > 0
      ? [
          {
            arbitrary: fc
              .constantFrom(...paramMutations)
              .map((m): [ParamMutation, BodyMutation] => [m, 'valid']),
            weight: 1,
          },
        ]
      : []),
    ...(bodyMutations.length > 0
      ? [
          {
            arbitrary: fc
              .constantFrom(...bodyMutations)
              .map((m): [ParamMutation, BodyMutation] => ['valid', m]),
            weight: 2,
          },
        ]
      : []),
  );
  return plan.chain(([paramMutation, bodyMutation]) =>
    drafted(operation, paramMutation, bodyMutation, examples, samples),
  );
}

/**
 * One unbroken request per known-good body of `operation` (its parameters drawn valid), for a run to
 * send before the random ones: whether any valid request of an operation with cross-field rules is
 * drawn at all must not depend on the seed.
 */
export function sampleRequestsFor(
  operation: Operation,
  examples: Examples,
  samples: readonly unknown[],
): fc.Arbitrary<RequestDraft[]> {
  return fc.tuple(...samples.map((sample) => drafted(operation, 'valid', 'valid', examples, [sample], true)));
}

function drafted(
  operation: Operation,
  paramMutation: ParamMutation,
  bodyMutation: BodyMutation,
  examples: Examples,
  samples: readonly unknown[],
  samplesOnly = false,
): fc.Arbitrary<RequestDraft> {
  return fc
    .tuple(
      params(operation, paramMutation, examples, samplesOnly),
      body(operation, bodyMutation, examples, samples, samplesOnly),
    )
    .map(([p, b]) => {
      // An API client: asks for JSON, so a route that serves browsers HTML answers in the JSON shapes.
      const headers: [string, string][] = [['accept', 'application/json'], ...p.headers];
      if (b.contentType !== undefined && b.contentType !== '') headers.push(['content-type', b.contentType]);
      const mutation = [
        paramMutation !== 'valid' ? `params:${paramMutation}` : '',
        bodyMutation !== 'valid' ? `body:${bodyMutation}` : '',
      ]
        .filter(Boolean)
        .join(' ');
      return {
        method: operation.method,
        target: p.target,
        headers,
        ...(b.body !== undefined ? { body: b.body } : {}),
        mutation: mutation || 'valid',
      };
    });
}

export type HeaderMutation = 'none' | 'drop' | 'duplicate' | 'garbage';

/** Applied after signing: one header dropped, sent twice (with another value), or given a garbage value. */
export function mutateHeaders(draft: RequestDraft, mutation: HeaderMutation, pick: number): RequestDraft {
  if (mutation === 'none' || draft.headers.length === 0) return draft;
  const index = pick % draft.headers.length;
  const header = draft.headers[index];
  if (!header) return draft;
  const [name, value] = header;
  const headers = [...draft.headers];
  if (mutation === 'drop') headers.splice(index, 1);
  if (mutation === 'duplicate') headers.push([name, pick % 2 === 0 ? value : `${value}0`]);
  if (mutation === 'garbage') headers[index] = [name, pick % 2 === 0 ? 'x'.repeat(700) : '-1'];
  return { ...draft, headers, mutation: `${draft.mutation} header:${mutation}:${name}` };
}
