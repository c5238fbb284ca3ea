import * as grpc from '@grpc/grpc-js';
import type { Health } from '../health/health.js';
import type { RateLimitService } from '../limiter/service.js';
import { RATE_LIMIT_QUOTA_SERVICE } from '../rlqs/grpc.js';
import type { StatsRegistry } from '../stats/registry.js';
import { HEALTH_SERVICE, healthHandlers, RATE_LIMIT_SERVICE, rateLimitHandlers } from './grpc-services.js';

/**
 * Construction and binding of the gRPC server. Credentials and channel options are parameters, so
 * TLS / mutual TLS (and their hot reload) plug in from outside without touching this file.
 */
export interface GrpcServerParts {
  service: RateLimitService;
  health: Health;
  registry: StatsRegistry;
  /** grpc-js server options, e.g. `grpc.max_connection_age_ms` (grpc-js adds +/-10% jitter itself). */
  options?: grpc.ServerOptions;
  /** The handlers of `StreamRateLimitQuotas` (RLQS) when it is served. */
  quota?: grpc.UntypedServiceImplementation | undefined;
}

export function createGrpcServer(parts: GrpcServerParts): grpc.Server {
  // No channelz: nothing here serves its admin API, and grpc-js tracks every call for it otherwise
  // (measured: about 1 us of CPU and a few objects per call on the ShouldRateLimit path).
  const server = new grpc.Server({ 'grpc.enable_channelz': 0, ...parts.options });
  server.addService(RATE_LIMIT_SERVICE, rateLimitHandlers(parts.service, parts.registry));
  server.addService(HEALTH_SERVICE, healthHandlers(parts.health));
  if (parts.quota) server.addService(RATE_LIMIT_QUOTA_SERVICE, parts.quota);
  return server;
}

/** `host:port` or `unix:<path>` for `GRPC_UDS`. */
export function grpcAddress(host: string, port: number, uds: string | undefined): string {
  if (uds) return `unix:${uds}`;
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Binds and resolves the bound port (0 for a unix socket). */
export function bindGrpc(
  server: grpc.Server,
  address: string,
  credentials: grpc.ServerCredentials,
): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, credentials, (error, port) => (error ? reject(error) : resolve(port)));
  });
}

/** Stops accepting, lets in-flight calls finish (bounded by `graceMs`), then forces the rest. */
export function shutdownGrpc(server: grpc.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
