import * as grpc from '@grpc/grpc-js';
import { type BucketAction, encodeQuotaResponse, RLQS_METHOD_PATH, type UsageReports } from './protos.js';
import type { RateLimitQuotaService } from './service.js';
import { decodeUsageReports } from './wire.js';

/**
 * `envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas` on the gRPC
 * server: a bidirectional stream per Envoy (per domain) feeding the quota service. Messages are
 * decoded here (protobuf that does not decode ends the stream with grpc-js's INTERNAL
 * "Error deserializing request"), answers encoded here.
 */
export const RATE_LIMIT_QUOTA_SERVICE: grpc.ServiceDefinition = {
  StreamRateLimitQuotas: {
    path: RLQS_METHOD_PATH,
    requestStream: true,
    responseStream: true,
    requestSerialize: () => {
      throw new Error('the server never sends usage reports');
    },
    requestDeserialize: (b: Buffer) => decodeUsageReports(b),
    responseSerialize: (actions: readonly BucketAction[]) => encodeQuotaResponse(actions),
    responseDeserialize: () => {
      throw new Error('the server never reads quota responses');
    },
  },
};

export function rateLimitQuotaHandlers(quota: RateLimitQuotaService): grpc.UntypedServiceImplementation {
  const stream: grpc.handleBidiStreamingCall<UsageReports, readonly BucketAction[]> = (call) => {
    let ended = false;
    const handle = quota.open({
      send: (actions) => {
        if (!ended) call.write(actions);
      },
      fail: (code, message) => {
        if (ended) return;
        ended = true;
        call.emit('error', { code, details: message });
      },
      end: () => {
        if (ended) return;
        ended = true;
        call.end();
      },
    });
    call.on('data', (reports: UsageReports) => handle.report(reports));
    const close = (): void => {
      void handle.end();
    };
    // The client half-closed: nothing more will come; answer with OK.
    call.on('end', () => {
      close();
      if (!ended) {
        ended = true;
        call.end();
      }
    });
    call.on('cancelled', close);
    call.on('error', close);
    call.on('close', close);
  };
  return { StreamRateLimitQuotas: stream };
}

/** The service on a backend that cannot hold the quota state (memcached): every stream fails with `message`. */
export function unavailableQuotaHandlers(message: string): grpc.UntypedServiceImplementation {
  const stream: grpc.handleBidiStreamingCall<UsageReports, readonly BucketAction[]> = (call) => {
    call.emit('error', { code: grpc.status.FAILED_PRECONDITION, details: message });
  };
  return { StreamRateLimitQuotas: stream };
}
