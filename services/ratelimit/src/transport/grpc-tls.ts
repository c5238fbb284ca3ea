import {
  type ChannelOptions,
  ServerCredentials as Credentials,
  experimental,
  type ServerCredentials,
  ServerInterceptingCall,
  type ServerInterceptor,
  status,
} from '@grpc/grpc-js';
import type { GrpcServerSettings } from '../settings/observability.js';
import { WatchedFileServerCredentials } from './watched-credentials.js';

/**
 * Transport settings of the gRPC server (spec "Authentication" and "gRPC server"):
 * - TLS with the certificate chain and key of `GRPC_SERVER_TLS_CERT`/`_KEY`, re-read every
 *   `refreshIntervalMs` (`WatchedFileServerCredentials`), so a renewed certificate is served to new
 *   connections without a restart;
 * - mutual TLS with `GRPC_CLIENT_TLS_CACERT` (the client must present a certificate of that CA) and
 *   `GRPC_CLIENT_TLS_SAN` (the certificate must carry that DNS name; grpc-js offers no hook in the
 *   handshake, so calls on a connection whose certificate lacks it fail with UNAUTHENTICATED);
 * - `GRPC_MAX_CONNECTION_AGE` / `_GRACE`: grpc-js closes a connection with GOAWAY after the age
 *   plus a random +/-10% jitter, and forcibly after the grace period.
 */
export interface TlsOptions {
  /** How often the certificate files are re-read. @default 1000 */
  readonly refreshIntervalMs?: number;
}

/** The DNS names of a peer certificate's subjectAltName (`DNS:a, DNS:b, IP Address:...`). */
export function dnsNames(subjectAltName: string | undefined): string[] {
  if (!subjectAltName) return [];
  return subjectAltName
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4));
}

/** Rejects every call whose client certificate does not carry the DNS name `san`. */
export function requireClientSan(san: string): ServerInterceptor {
  return (_method, call) =>
    new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, mdNext) {
            const cert = call.getAuthContext().sslPeerCertificate;
            if (dnsNames(cert?.subjectaltname).includes(san)) {
              mdNext(metadata);
            } else {
              call.sendStatus({
                code: status.UNAUTHENTICATED,
                details: `client certificate does not carry the subject alternative name '${san}'`,
              });
            }
          },
        });
      },
    });
}

export function buildGrpcServerCredentials(
  settings: GrpcServerSettings,
  options: TlsOptions = {},
): ServerCredentials {
  if (!settings.useTls) return Credentials.createInsecure();
  if (settings.certFile === undefined || settings.keyFile === undefined) {
    throw new Error(
      'GRPC_SERVER_TLS_CERT and GRPC_SERVER_TLS_KEY are required when GRPC_SERVER_USE_TLS is true',
    );
  }
  const credentials = new WatchedFileServerCredentials(
    {
      cert: ['GRPC_SERVER_TLS_CERT', settings.certFile],
      key: ['GRPC_SERVER_TLS_KEY', settings.keyFile],
      clientCa:
        settings.clientCaFile === undefined ? undefined : ['GRPC_CLIENT_TLS_CACERT', settings.clientCaFile],
    },
    options.refreshIntervalMs ?? 1_000,
  );
  if (settings.clientSan === undefined) return credentials;
  return experimental.createServerCredentialsWithInterceptors(credentials, [
    requireClientSan(settings.clientSan),
  ]);
}

/** grpc-js server options; a zero age or grace (the default) leaves the option unset: unlimited. */
export function grpcServerOptions(settings: GrpcServerSettings): ChannelOptions {
  const options: ChannelOptions = {};
  if (settings.maxConnectionAgeMs > 0)
    options['grpc.max_connection_age_ms'] = Math.round(settings.maxConnectionAgeMs);
  if (settings.maxConnectionAgeGraceMs > 0) {
    options['grpc.max_connection_age_grace_ms'] = Math.round(settings.maxConnectionAgeGraceMs);
  }
  return options;
}
