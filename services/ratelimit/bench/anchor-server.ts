import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/**
 * The benchmark anchor: a bare @grpc/grpc-js server loading the same .proto files with
 * @grpc/proto-loader and answering every ShouldRateLimit with a constant OK response.
 * Usage: node bench/dist/anchor-server.js <port> <proto dir> (the benchmark transpiles it, see
 * compiled.ts, and passes packages/ratelimit-proto's folder).
 */
const PROTO_DIR = process.argv[3];
if (!PROTO_DIR) throw new Error('usage: anchor-server <port> <proto dir>');
const definition = protoLoader.loadSync('envoy/service/ratelimit/v3/rls.proto', { includeDirs: [PROTO_DIR] });
const pkg = grpc.loadPackageDefinition(definition) as unknown as {
  envoy: { service: { ratelimit: { v3: { RateLimitService: grpc.ServiceClientConstructor } } } };
};
const service = pkg.envoy.service.ratelimit.v3.RateLimitService.service;
const OK = {
  overallCode: 'OK',
  statuses: [
    { code: 'OK', currentLimit: { requestsPerUnit: 1000000000, unit: 'SECOND' }, limitRemaining: 999999999 },
  ],
};

const server = new grpc.Server();
server.addService(service, {
  ShouldRateLimit: (_call: unknown, callback: grpc.sendUnaryData<typeof OK>) => callback(null, OK),
});
server.bindAsync(
  `127.0.0.1:${process.argv[2] ?? '9801'}`,
  grpc.ServerCredentials.createInsecure(),
  (error) => {
    if (error) throw error;
    process.stdout.write('anchor listening\n');
  },
);
process.on('SIGTERM', () => server.forceShutdown());
