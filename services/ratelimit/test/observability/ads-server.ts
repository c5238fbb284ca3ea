import * as grpc from '@grpc/grpc-js';
import {
  ADS_METHOD_PATH,
  type DiscoveryRequestMessage,
  type DiscoveryResponseMessage,
  decodeRequest,
  encodeRateLimitConfig,
  encodeResponse,
  RATELIMIT_CONFIG_TYPE_URL,
} from '../../src/runtime/xds/protos.js';

/**
 * A small ADS management server: records every request and lets the test push responses on the
 * open stream. Started on port 0 (`port` tells which it got); a test that restarts it keeps one
 * address for the client with a TcpFront of the testkit, never by binding a released port again.
 */
export interface ManagementServer {
  readonly port: number;
  requests: DiscoveryRequestMessage[];
  headers: Record<string, string>[];
  push(version: string, configs: object[]): void;
  waitForRequests(n: number): Promise<DiscoveryRequestMessage[]>;
  stop(): void;
}

export async function startManagementServer(
  creds: grpc.ServerCredentials = grpc.ServerCredentials.createInsecure(),
): Promise<ManagementServer> {
  const server = new grpc.Server();
  const requests: DiscoveryRequestMessage[] = [];
  const headers: Record<string, string>[] = [];
  let current: grpc.ServerDuplexStream<DiscoveryRequestMessage, DiscoveryResponseMessage> | undefined;
  let waiters: (() => void)[] = [];
  let nonce = 0;
  server.addService(
    {
      StreamAggregatedResources: {
        path: ADS_METHOD_PATH,
        requestStream: true,
        responseStream: true,
        requestSerialize: () => Buffer.alloc(0),
        requestDeserialize: decodeRequest,
        responseSerialize: encodeResponse,
        responseDeserialize: () => ({}),
      },
    },
    {
      StreamAggregatedResources: (
        call: grpc.ServerDuplexStream<DiscoveryRequestMessage, DiscoveryResponseMessage>,
      ) => {
        current = call;
        headers.push(
          Object.fromEntries(Object.entries(call.metadata.getMap()).map(([k, v]) => [k, String(v)])),
        );
        call.on('data', (req: DiscoveryRequestMessage) => {
          requests.push(req);
          for (const w of waiters) w();
          waiters = [];
        });
        call.on('error', () => {});
        call.on('end', () => call.end());
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', creds, (e, bound) => (e ? reject(e) : resolve(bound))),
  );
  return {
    port,
    requests,
    headers,
    push(version, configs) {
      nonce += 1;
      current?.write({
        version_info: version,
        type_url: RATELIMIT_CONFIG_TYPE_URL,
        nonce: `nonce-${nonce}`,
        resources: configs.map(encodeRateLimitConfig),
      });
    },
    async waitForRequests(n) {
      while (requests.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
      return requests;
    },
    stop: () => server.forceShutdown(),
  };
}
