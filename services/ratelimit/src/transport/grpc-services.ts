import * as grpc from '@grpc/grpc-js';
import type { Health } from '../health/health.js';
import type { CallResult, RateLimitService } from '../limiter/service.js';
import {
  decodeRequest,
  decodeResponse,
  encodeRequest,
  encodeResponse,
  HealthCheckRequestType,
  HealthCheckResponseType,
  type RateLimitRequest,
  type RateLimitResponse,
} from '../proto/messages.js';
import type { StatsRegistry } from '../stats/registry.js';

/**
 * gRPC service definitions and handlers: `envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit`
 * (reference "Wire protocol") and the standard `grpc.health.v1.Health` service (name `ratelimit`,
 * or '' for the whole server) mirroring the health state.
 */
export const RATE_LIMIT_SERVICE: grpc.ServiceDefinition = {
  ShouldRateLimit: {
    path: '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
    requestStream: false,
    responseStream: false,
    requestSerialize: (r: RateLimitRequest) => Buffer.from(encodeRequest(r)),
    requestDeserialize: (b: Buffer) => decodeRequest(b),
    responseSerialize: (r: RateLimitResponse) => {
      const bytes = encodeResponse(r);
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    responseDeserialize: (b: Buffer) => decodeResponse(b),
  },
};

export const HEALTH_SERVING = 1;
export const HEALTH_NOT_SERVING = 2;

interface HealthCheckRequest {
  service: string;
}
interface HealthCheckResponse {
  status: number;
}

/** The (de)serialisers both health methods share; only the path and the response stream differ. */
const HEALTH_CODEC = {
  requestSerialize: (r: HealthCheckRequest) => Buffer.from(HealthCheckRequestType.encode(r).finish()),
  requestDeserialize: (b: Buffer) =>
    HealthCheckRequestType.toObject(HealthCheckRequestType.decode(b), { defaults: true }),
  responseSerialize: (r: HealthCheckResponse) => Buffer.from(HealthCheckResponseType.encode(r).finish()),
  responseDeserialize: (b: Buffer) =>
    HealthCheckResponseType.toObject(HealthCheckResponseType.decode(b), { defaults: true }),
};

export const HEALTH_SERVICE: grpc.ServiceDefinition = {
  Check: {
    path: '/grpc.health.v1.Health/Check',
    requestStream: false,
    responseStream: false,
    ...HEALTH_CODEC,
  },
  Watch: {
    path: '/grpc.health.v1.Health/Watch',
    requestStream: false,
    responseStream: true,
    ...HEALTH_CODEC,
  },
};

const KNOWN_HEALTH_SERVICES = new Set(['', 'ratelimit']);
// grpc-js copies an error into a status of its own, so one frozen object serves every failed call.
const INTERNAL_ERROR = Object.freeze({ code: grpc.status.INTERNAL, details: 'internal error' });

export function rateLimitHandlers(
  service: RateLimitService,
  registry: StatsRegistry,
): grpc.UntypedServiceImplementation {
  const totalRequests = registry.counter('ratelimit_server.ShouldRateLimit.total_requests');
  const responseTime = registry.timer('ratelimit_server.ShouldRateLimit.response_time');
  const answer = (
    result: CallResult,
    started: number,
    callback: grpc.sendUnaryData<RateLimitResponse>,
  ): void => {
    responseTime.record(performance.now() - started);
    if (result.ok) callback(null, result.response);
    else callback({ code: grpc.status.UNKNOWN, details: result.error.message });
  };
  const shouldRateLimit: grpc.handleUnaryCall<RateLimitRequest, RateLimitResponse> = (call, callback) => {
    const started = performance.now();
    totalRequests.inc();
    let outcome: ReturnType<RateLimitService['shouldRateLimit']>;
    try {
      outcome = service.shouldRateLimit(call.request);
    } catch {
      callback(INTERNAL_ERROR);
      return;
    }
    // The in-process store answers at once: no promise, no closure, no microtask before the answer.
    if (outcome instanceof Promise) {
      outcome.then(
        (result) => answer(result, started, callback),
        () => callback(INTERNAL_ERROR),
      );
    } else answer(outcome, started, callback);
  };
  return { ShouldRateLimit: shouldRateLimit };
}

export function healthHandlers(health: Health): grpc.UntypedServiceImplementation {
  const statusNow = (): number => (health.healthy() ? HEALTH_SERVING : HEALTH_NOT_SERVING);
  const check: grpc.handleUnaryCall<HealthCheckRequest, HealthCheckResponse> = (call, callback) => {
    if (!KNOWN_HEALTH_SERVICES.has(call.request.service)) {
      callback({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
      return;
    }
    callback(null, { status: statusNow() });
  };
  const watchers = new Set<grpc.ServerWritableStream<HealthCheckRequest, HealthCheckResponse>>();
  health.onChange(() => {
    for (const w of watchers) w.write({ status: statusNow() });
  });
  const watchCall: grpc.handleServerStreamingCall<HealthCheckRequest, HealthCheckResponse> = (call) => {
    // SERVICE_UNKNOWN (3) for a name this server does not serve, as the health protocol says for Watch.
    call.write({ status: KNOWN_HEALTH_SERVICES.has(call.request.service) ? statusNow() : 3 });
    if (!KNOWN_HEALTH_SERVICES.has(call.request.service)) return;
    watchers.add(call);
    call.on('cancelled', () => watchers.delete(call));
    call.on('close', () => watchers.delete(call));
  };
  return { Check: check, Watch: watchCall };
}
