import {
  CODE_NAMES,
  type RateLimitRequest,
  type RateLimitResponse,
  REQUEST_UNIT_NAMES,
  type RequestDescriptor,
  type RequestEntry,
  UNIT_NAMES,
} from './messages.js';

/**
 * The protobuf-JSON mapping of the two messages (https://protobuf.dev/programming-guides/json/):
 * requests accept lowerCamelCase and original snake_case names, `null` as the default, numbers or
 * decimal strings for integers, enum names or numbers; unknown fields are rejected. Responses omit
 * default values, print enums by name and durations as `"58s"`.
 */
export class JsonRequestError extends Error {}

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads the fields of `obj`, mapping snake_case names to camelCase, rejecting unknown ones. */
function fields(obj: unknown, where: string, allowed: readonly string[]): Map<string, unknown> {
  if (!isObject(obj)) throw new JsonRequestError(`${where}: expected an object`);
  const out = new Map<string, unknown>();
  for (const [name, value] of Object.entries(obj)) {
    const camel = name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
    if (!allowed.includes(camel)) throw new JsonRequestError(`${where}: unknown field '${name}'`);
    if (out.has(camel)) throw new JsonRequestError(`${where}: field '${name}' given twice`);
    if (value !== null) out.set(camel, value);
  }
  return out;
}

function str(v: unknown, where: string): string {
  if (v === undefined) return '';
  if (typeof v !== 'string') throw new JsonRequestError(`${where}: expected a string`);
  return v;
}

function unsigned(v: unknown, where: string, max: number): number {
  if (v === undefined) return 0;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
    throw new JsonRequestError(`${where}: expected an unsigned integer`);
  }
  // The limit, not the value: a JSON number above 2^53 has already been rounded by the parser, so
  // echoing it would show a number the caller did not send.
  if (n > max) throw new JsonRequestError(`${where}: out of range, at most ${max}`);
  return n;
}

function list(v: unknown, where: string): unknown[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new JsonRequestError(`${where}: expected a list`);
  return v;
}

function unitOf(v: unknown, where: string): number {
  if (v === undefined) return 0;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < REQUEST_UNIT_NAMES.length) return v;
  if (typeof v === 'string') {
    const i = (REQUEST_UNIT_NAMES as readonly string[]).indexOf(v);
    if (i >= 0) return i;
  }
  throw new JsonRequestError(`${where}: unknown unit ${JSON.stringify(v)}`);
}

function parseDescriptor(raw: unknown, where: string): RequestDescriptor {
  const f = fields(raw, where, ['entries', 'limit', 'hitsAddend']);
  const entries: RequestEntry[] = list(f.get('entries'), `${where}.entries`).map((e, i) => {
    const ef = fields(e, `${where}.entries[${i}]`, ['key', 'value']);
    return {
      key: str(ef.get('key'), `${where}.entries[${i}].key`),
      value: str(ef.get('value'), `${where}.entries[${i}].value`),
    };
  });
  const descriptor: RequestDescriptor = { entries };
  const limit = f.get('limit');
  if (limit !== undefined) {
    const lf = fields(limit, `${where}.limit`, ['requestsPerUnit', 'unit']);
    descriptor.limit = {
      requestsPerUnit: unsigned(lf.get('requestsPerUnit'), `${where}.limit.requests_per_unit`, 4294967295),
      unit: unitOf(lf.get('unit'), `${where}.limit.unit`),
    };
  }
  const hits = f.get('hitsAddend');
  if (hits !== undefined) {
    // google.protobuf.UInt64Value: the JSON form is the bare number (or decimal string).
    descriptor.hitsAddend = unsigned(hits, `${where}.hits_addend`, Number.MAX_SAFE_INTEGER);
  }
  return descriptor;
}

/** Parses the JSON text of a RateLimitRequest; throws JsonRequestError on anything malformed. */
export function parseJsonRequest(text: string): RateLimitRequest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new JsonRequestError('request body is not valid JSON');
  }
  const f = fields(raw, 'request', ['domain', 'descriptors', 'hitsAddend']);
  return {
    domain: str(f.get('domain'), 'request.domain'),
    descriptors: list(f.get('descriptors'), 'request.descriptors').map((d, i) =>
      parseDescriptor(d, `request.descriptors[${i}]`),
    ),
    hitsAddend: unsigned(f.get('hitsAddend'), 'request.hits_addend', 4294967295),
  };
}

/** google.protobuf.Duration in protobuf-JSON: `"58s"`, `"0.300s"` (3, 6 or 9 fraction digits). */
function durationJson(seconds: number, nanos: number): string {
  if (nanos === 0) return `${seconds}s`;
  let fraction = String(nanos).padStart(9, '0');
  while (fraction.endsWith('000')) fraction = fraction.slice(0, -3);
  return `${seconds}.${fraction}s`;
}

/** The protobuf-JSON text of a RateLimitResponse (defaults omitted, enums by name). */
export function responseToJson(response: RateLimitResponse): string {
  const out: JsonObject = {};
  if (response.overallCode !== 0) out.overallCode = CODE_NAMES[response.overallCode];
  if (response.statuses.length > 0) {
    out.statuses = response.statuses.map((s) => {
      const status: JsonObject = {};
      if (s.code !== 0) status.code = CODE_NAMES[s.code];
      if (s.currentLimit) {
        const limit: JsonObject = {};
        if (s.currentLimit.requestsPerUnit !== 0) limit.requestsPerUnit = s.currentLimit.requestsPerUnit;
        if (s.currentLimit.unit !== 0) limit.unit = UNIT_NAMES[s.currentLimit.unit];
        if (s.currentLimit.name) limit.name = s.currentLimit.name;
        status.currentLimit = limit;
      }
      if (s.limitRemaining !== 0) status.limitRemaining = s.limitRemaining;
      if (s.durationUntilResetSeconds !== undefined)
        status.durationUntilReset = durationJson(s.durationUntilResetSeconds, s.durationUntilResetNanos ?? 0);
      return status;
    });
  }
  if (response.responseHeadersToAdd.length > 0) {
    out.responseHeadersToAdd = response.responseHeadersToAdd.map((h) => ({ key: h.key, value: h.value }));
  }
  // google.protobuf.Struct is a plain JSON object in protobuf-JSON.
  if (response.dynamicMetadata) out.dynamicMetadata = response.dynamicMetadata;
  return JSON.stringify(out);
}
