import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RATELIMIT_PROTO_DIR, RLS_PROTO } from '@platform/ratelimit-proto/dir';
import protobuf from 'protobufjs';

/**
 * The protobuf messages of the v3 rate-limit protocol, loaded from the `.proto` files kept in
 * `services/ratelimit/proto` (written from the reference page's field list), and the plain
 * TypeScript shapes the rest of the service works with.
 */
/** This service's own .proto files (the gRPC health service); the rate-limit ones are shared. */
export const PROTO_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'proto');
export { RATELIMIT_PROTO_DIR, RLS_PROTO };
export const HEALTH_PROTO = 'grpc/health/v1/health.proto';

/** `RateLimitResponse.Code`. */
export const Code = { UNKNOWN: 0, OK: 1, OVER_LIMIT: 2 } as const;
export type Code = (typeof Code)[keyof typeof Code];
export const CODE_NAMES = ['UNKNOWN', 'OK', 'OVER_LIMIT'] as const;

/** `RateLimitResponse.RateLimit.Unit` (the request-side `envoy.type.v3.RateLimitUnit` has the same numbers, without WEEK). */
export const UNIT_NAMES = ['UNKNOWN', 'SECOND', 'MINUTE', 'HOUR', 'DAY', 'MONTH', 'YEAR', 'WEEK'] as const;
export type UnitName = (typeof UNIT_NAMES)[number];
/** The request-side unit enum `envoy.type.v3.RateLimitUnit` (no WEEK). */
export const REQUEST_UNIT_NAMES = ['UNKNOWN', 'SECOND', 'MINUTE', 'HOUR', 'DAY', 'MONTH', 'YEAR'] as const;

export interface RequestEntry {
  key: string;
  value: string;
}

export interface LimitOverride {
  requestsPerUnit: number;
  /** `envoy.type.v3.RateLimitUnit` number. */
  unit: number;
}

export interface RequestDescriptor {
  entries: RequestEntry[];
  limit?: LimitOverride | undefined;
  /** The descriptor's own hits_addend when the wrapper is present (0 means check without counting). */
  hitsAddend?: number | undefined;
}

export interface RateLimitRequest {
  domain: string;
  descriptors: RequestDescriptor[];
  hitsAddend: number;
}

export interface CurrentLimit {
  requestsPerUnit: number;
  /** `RateLimitResponse.RateLimit.Unit` number. */
  unit: number;
  name?: string;
}

export interface DescriptorStatus {
  code: Code;
  currentLimit?: CurrentLimit | undefined;
  limitRemaining: number;
  /** Whole seconds until the window resets; present only when a limit matched. */
  durationUntilResetSeconds?: number | undefined;
  /** The rest of `duration_until_reset` below a second (sliding window, token bucket); 0 or absent otherwise. */
  durationUntilResetNanos?: number | undefined;
  /**
   * Not on the wire: for an OVER_LIMIT status, ms until the same call would pass (the
   * `retry-after` header of LIMIT_ALL_DESCRIPTORS_HEADERS_ENABLED).
   */
  retryAfterMs?: number | undefined;
}

export interface HeaderValue {
  key: string;
  value: string;
}

/** A JSON-like value (google.protobuf.Value). */
export type StructValue = string | number | boolean | null | StructValue[] | { [key: string]: StructValue };

export interface RateLimitResponse {
  overallCode: Code;
  statuses: DescriptorStatus[];
  responseHeadersToAdd: HeaderValue[];
  /** google.protobuf.Struct `dynamic_metadata` (RESPONSE_DYNAMIC_METADATA). */
  dynamicMetadata?: { [key: string]: StructValue } | undefined;
}

interface WireValue {
  nullValue?: number;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: { fields?: Record<string, WireValue> };
  listValue?: { values?: WireValue[] };
}

function toWireValue(v: StructValue): WireValue {
  if (v === null) return { nullValue: 0 };
  if (typeof v === 'number') return { numberValue: v };
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map(toWireValue) } };
  return { structValue: toWireStruct(v) };
}

function toWireStruct(o: { [key: string]: StructValue }): { fields: Record<string, WireValue> } {
  return { fields: Object.fromEntries(Object.entries(o).map(([k, v]) => [k, toWireValue(v)])) };
}

function fromWireValue(v: WireValue): StructValue {
  if (v.numberValue !== undefined && v.numberValue !== null) return v.numberValue;
  if (v.stringValue !== undefined && v.stringValue !== null) return v.stringValue;
  if (v.boolValue !== undefined && v.boolValue !== null) return v.boolValue;
  if (v.listValue) return (v.listValue.values ?? []).map(fromWireValue);
  if (v.structValue) return fromWireStruct(v.structValue);
  return null;
}

function fromWireStruct(s: { fields?: Record<string, WireValue> }): { [key: string]: StructValue } {
  return Object.fromEntries(Object.entries(s.fields ?? {}).map(([k, v]) => [k, fromWireValue(v)]));
}

const root = new protobuf.Root();
root.resolvePath = (_origin, target) =>
  target.startsWith('google/')
    ? target
    : join(target.startsWith('envoy/') ? RATELIMIT_PROTO_DIR : PROTO_DIR, target);
root.loadSync([RLS_PROTO, HEALTH_PROTO], { keepCase: false });
root.resolveAll();

export const RequestType = root.lookupType('envoy.service.ratelimit.v3.RateLimitRequest');
export const ResponseType = root.lookupType('envoy.service.ratelimit.v3.RateLimitResponse');
export const HealthCheckRequestType = root.lookupType('grpc.health.v1.HealthCheckRequest');
export const HealthCheckResponseType = root.lookupType('grpc.health.v1.HealthCheckResponse');

export const UINT32_MAX = 4294967295;

/** protobufjs' Long for a 64-bit integer (without the `long` package's types). */
export interface LongLike {
  toNumber(): number;
  high: number;
}

export function uint64ToNumber(value: number | LongLike | null | undefined): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'number') return value;
  // A uint64 above 2^53 cannot be represented; it is far above any valid hits_addend anyway.
  if (value.high >>> 0 >= 0x200000) return Number.MAX_SAFE_INTEGER;
  return value.toNumber();
}

interface WireEntry {
  key?: string;
  value?: string;
}
interface WireDescriptor {
  entries?: WireEntry[];
  limit?: { requestsPerUnit?: number; unit?: number } | null;
  hitsAddend?: { value?: number | LongLike } | null;
}
interface WireRequest {
  domain?: string;
  descriptors?: WireDescriptor[];
  hitsAddend?: number;
}

/** Decodes a binary RateLimitRequest; throws on malformed protobuf or an out-of-range hits_addend. */
export function decodeRequest(bytes: Uint8Array): RateLimitRequest {
  const wire = RequestType.decode(bytes) as unknown as WireRequest;
  const wireDescriptors = wire.descriptors ?? [];
  // Sized once: this runs on every call (`push` onto [] would reserve room for 16).
  const descriptors = new Array<RequestDescriptor>(wireDescriptors.length);
  for (let i = 0; i < wireDescriptors.length; i++) {
    const d = wireDescriptors[i]!;
    const wireEntries = d.entries ?? [];
    const entries = new Array<RequestEntry>(wireEntries.length);
    for (let j = 0; j < wireEntries.length; j++) {
      const e = wireEntries[j]!;
      entries[j] = { key: e.key ?? '', value: e.value ?? '' };
    }
    const descriptor: RequestDescriptor = { entries };
    if (d.limit)
      descriptor.limit = { requestsPerUnit: d.limit.requestsPerUnit ?? 0, unit: d.limit.unit ?? 0 };
    if (d.hitsAddend) descriptor.hitsAddend = uint64ToNumber(d.hitsAddend.value);
    descriptors[i] = descriptor;
  }
  return { domain: wire.domain ?? '', descriptors, hitsAddend: wire.hitsAddend ?? 0 };
}

/** Encodes a RateLimitResponse into protobuf bytes. */
export function encodeResponse(response: RateLimitResponse): Uint8Array {
  const statuses = response.statuses.map((s) => ({
    code: s.code,
    currentLimit: s.currentLimit,
    limitRemaining: s.limitRemaining,
    durationUntilReset:
      s.durationUntilResetSeconds === undefined
        ? undefined
        : s.durationUntilResetNanos
          ? { seconds: s.durationUntilResetSeconds, nanos: s.durationUntilResetNanos }
          : { seconds: s.durationUntilResetSeconds },
  }));
  return ResponseType.encode({
    overallCode: response.overallCode,
    statuses,
    responseHeadersToAdd: response.responseHeadersToAdd,
    ...(response.dynamicMetadata ? { dynamicMetadata: toWireStruct(response.dynamicMetadata) } : {}),
  }).finish();
}

/** Decodes a binary RateLimitResponse (used by the command-line client and tests). */
export function decodeResponse(bytes: Uint8Array): RateLimitResponse {
  const wire = ResponseType.toObject(ResponseType.decode(bytes), { defaults: true, longs: Number }) as {
    overallCode: Code;
    statuses: {
      code: Code;
      currentLimit?: CurrentLimit | null;
      limitRemaining: number;
      durationUntilReset?: { seconds: number; nanos?: number } | null;
    }[];
    responseHeadersToAdd: HeaderValue[];
    dynamicMetadata?: { fields?: Record<string, WireValue> } | null;
  };
  return {
    ...(wire.dynamicMetadata ? { dynamicMetadata: fromWireStruct(wire.dynamicMetadata) } : {}),
    overallCode: wire.overallCode,
    statuses: wire.statuses.map((s) => ({
      code: s.code,
      currentLimit: s.currentLimit ?? undefined,
      limitRemaining: s.limitRemaining,
      durationUntilResetSeconds: s.durationUntilReset ? s.durationUntilReset.seconds : undefined,
      ...(s.durationUntilReset?.nanos ? { durationUntilResetNanos: s.durationUntilReset.nanos } : {}),
    })),
    responseHeadersToAdd: wire.responseHeadersToAdd.map((h) => ({ key: h.key, value: h.value })),
  };
}

/** Encodes a RateLimitRequest (command-line client, tests, bench). */
export function encodeRequest(request: RateLimitRequest): Uint8Array {
  return RequestType.encode({
    domain: request.domain,
    hitsAddend: request.hitsAddend,
    descriptors: request.descriptors.map((d) => ({
      entries: d.entries,
      limit: d.limit,
      hitsAddend: d.hitsAddend === undefined ? undefined : { value: d.hitsAddend },
    })),
  }).finish();
}
