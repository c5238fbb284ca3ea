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
 * open stream. `stop()` and a new `startManagementServer(port)` restart it on the same port.
 */
export interface ManagementServer {
  requests: DiscoveryRequestMessage[];
  headers: Record<string, string>[];
  push(version: string, configs: object[]): void;
  waitForRequests(n: number): Promise<DiscoveryRequestMessage[]>;
  stop(): void;
}

export async function startManagementServer(
  port: number,
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
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, creds, (e) => (e ? reject(e) : resolve())),
  );
  return {
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
