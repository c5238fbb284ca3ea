/**
 * The fuzz property of one running service: requests drawn from its OpenAPI operations, each sent
 * raw over HTTP, and the answers checked: no 5xx, every 4xx body in the documented error shape, and
 * the state digest unchanged by every refused request. The process must still be healthy afterwards.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import fc from 'fast-check';
import { documentedResponse, type Operation, type Schema } from './openapi.js';
import {
  type HeaderMutation,
  mutateHeaders,
  type RequestDraft,
  requestsFor,
  sampleRequestsFor,
} from './requests.js';
import { type RawResponse, sendRaw } from './send.js';
import type { FuzzSettings } from './settings.js';
import type { Examples } from './values.js';

export interface FuzzTarget {
  /** Name used in messages, e.g. `events`. */
  readonly name: string;
  readonly baseUrl: string;
  readonly operations: readonly Operation[];
  /**
   * Adds valid credentials to a request (before the header mutations), for the operations that need
   * them (`operation.security`, or credentials in parameters as the exchange's v2 API has).
   */
  readonly sign?: (draft: RequestDraft, operation: Operation) => RequestDraft | Promise<RequestDraft>;
  /** The service's error body, for 4xx answers of operations that document no schema for that status. */
  readonly errorShape: Schema;
  /**
   * Read every error schema as closed (`additionalProperties: false` on its objects): the documents
   * list the fields of the shape without forbidding others, so Fastify's own error body
   * (`{statusCode, code, error, message}`) would otherwise pass for ours. @default true
   */
  readonly closedErrorShape?: boolean;
  /** A digest of the state that a refused request must leave unchanged. */
  readonly digest: () => Promise<string>;
  /**
   * A 5xx the test arranged on purpose and the document describes, e.g. 502 from a route whose
   * upstream the test leaves down; still checked for the error shape and the unchanged state.
   */
  readonly expectedServerError?: (operation: Operation, status: number, body: string) => boolean;
  /** Known-good values by field or parameter name, mixed into the valid values (see values.ts). */
  readonly examples?: Examples;
  /**
   * Known-good bodies by operation id (`POST /path`), for fields that must agree with each other. Each
   * is also sent once, valid and signed, before the random requests (so a test may count on them).
   */
  readonly samples?: Readonly<Record<string, readonly unknown[]>>;
  /** A path that answers below 500 while the process is healthy, e.g. `/health`. */
  readonly healthPath: string;
}

/** What a run saw, so a test can show that the fuzz reached the handlers. */
export interface FuzzStats {
  readonly requests: number;
  /** Answers per status class and operation, e.g. `{"POST /v3/auth/me": {"2xx": 3, "4xx": 9}}`. */
  readonly byOperation: Record<string, Record<string, number>>;
}

const ajv = new Ajv({ strict: false, allErrors: true });
const validators = new WeakMap<Schema, ValidateFunction>();
const closedValidators = new WeakMap<Schema, ValidateFunction>();

/** `schema` with `additionalProperties: false` on every object that lists its properties. */
export function closed(schema: Schema): Schema {
  const out: Schema = { ...schema };
  if (schema.properties) {
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, closed(v)]));
    out.additionalProperties ??= false;
  }
  if (schema.items) out.items = closed(schema.items);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = schema[key];
    if (list) out[key] = list.map(closed);
  }
  return out;
}

function validatorOf(schema: Schema, close: boolean): ValidateFunction {
  const cache = close ? closedValidators : validators;
  let validate = cache.get(schema);
  if (!validate) {
    validate = ajv.compile(close ? closed(schema) : schema);
    cache.set(schema, validate);
  }
  return validate;
}

function describe(draft: RequestDraft, response: RawResponse): string {
  const body = draft.body ? draft.body.subarray(0, 300).toString('utf8') : '';
  return (
    `${draft.method} ${draft.target.slice(0, 300)} [${draft.mutation}] -> ${response.status}\n` +
    `  request headers: ${JSON.stringify(draft.headers).slice(0, 400)}\n` +
    `  request body: ${JSON.stringify(body)}\n` +
    `  response: ${response.text.slice(0, 500)}`
  );
}

/** An operation documenting no JSON response at all: a page for browsers, its errors are pages too. */
function servesPages(operation: Operation): boolean {
  return Object.values(operation.responses).every((schema) => schema === undefined);
}

/** Checks one answer; returns a failure message or undefined. */
export function checkAnswer(
  target: Pick<FuzzTarget, 'errorShape' | 'closedErrorShape' | 'expectedServerError'>,
  operation: Operation,
  draft: RequestDraft,
  response: RawResponse,
): string | undefined {
  const expected =
    response.status >= 500 && target.expectedServerError?.(operation, response.status, response.text);
  if ((response.status >= 500 && !expected) || response.status < 100)
    return `server error: ${describe(draft, response)}`;
  if (response.status < 400) return undefined;
  // HTML error pages are the documented answer of pages (operations documenting no JSON at all, such
  // as a hosted payment form) and of a browser's request (no JSON asked for: the accept header dropped).
  if (String(response.headers['content-type']).startsWith('text/html')) {
    const asksJson = draft.headers.some(([n, v]) => n === 'accept' && v.includes('application/json'));
    if (!asksJson || servesPages(operation)) return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(response.text);
  } catch {
    return `error body is not JSON: ${describe(draft, response)}`;
  }
  const schema = documentedResponse(operation, response.status) ?? target.errorShape;
  const validate = validatorOf(schema, target.closedErrorShape ?? true);
  if (!validate(json))
    return `error body is not the documented error shape (${ajv.errorsText(validate.errors)}): ${describe(draft, response)}`;
  return undefined;
}

async function assertHealthy(target: FuzzTarget): Promise<void> {
  const response = await fetch(`${target.baseUrl}${target.healthPath}`, {
    signal: AbortSignal.timeout(5_000),
  });
  await response.arrayBuffer();
  if (response.status >= 500)
    throw new Error(`${target.name}: ${target.healthPath} answers ${response.status}`);
}

/** Runs the property; throws with the seed that repeats a failure. */
export async function fuzzService(
  target: FuzzTarget,
  settings: Pick<FuzzSettings, 'numRuns' | 'seed'>,
): Promise<FuzzStats> {
  if (target.operations.length === 0) throw new Error(`${target.name}: no operations to fuzz`);
  const byOperation: Record<string, Record<string, number>> = {};
  let requests = 0;
  const sample = fc
    .nat({ max: target.operations.length - 1 })
    .chain((index) =>
      fc.tuple(
        fc.constant(index),
        requestsFor(
          target.operations[index] as Operation,
          target.examples,
          target.samples?.[(target.operations[index] as Operation).id],
        ),
        fc.constantFrom<HeaderMutation>('none', 'none', 'none', 'drop', 'duplicate', 'garbage'),
        fc.nat(),
      ),
    );
  const property = fc.asyncProperty(sample, async ([index, unsigned, headerMutation, pick]) => {
    const operation = target.operations[index] as Operation;
    const signed = target.sign ? await target.sign(unsigned, operation) : unsigned;
    const draft = mutateHeaders(signed, headerMutation, pick);
    const before = await target.digest();
    const response = await sendRaw(target.baseUrl, draft);
    requests += 1;
    const counts = byOperation[operation.id] ?? {};
    byOperation[operation.id] = counts;
    const key = `${String(response.status)[0]}xx`;
    counts[key] = (counts[key] ?? 0) + 1;
    const failure = checkAnswer(target, operation, draft, response);
    if (failure) throw new Error(failure);
    if (response.status >= 400) {
      const after = await target.digest();
      if (after !== before)
        throw new Error(`a refused request changed the state: ${describe(draft, response)}`);
    }
  });
  // fast-check runs `examples` before the drawn values: the known-good bodies first, whatever the seed.
  const firsts: [[number, RequestDraft, HeaderMutation, number]][] = [];
  target.operations.forEach((operation, index) => {
    const samples = target.samples?.[operation.id] ?? [];
    if (samples.length === 0) return;
    const [drafts] = fc.sample(sampleRequestsFor(operation, target.examples ?? {}, samples), {
      numRuns: 1,
      seed: settings.seed,
    });
    for (const draft of drafts ?? []) firsts.push([[index, draft, 'none', 0]]);
  });
  try {
    await fc.assert(property, { numRuns: settings.numRuns, seed: settings.seed, examples: firsts });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : '';
    throw new Error(
      `${target.name} fuzz failed; repeat with FUZZ_SEED=${settings.seed} FUZZ_RUNS=${settings.numRuns}\n` +
        `${cause}\n${message.slice(0, 3_000)}`,
    );
  }
  await assertHealthy(target);
  return { requests, byOperation };
}
