import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/**
 * The benchmark anchor: a bare @grpc/grpc-js server loading the same .proto files with
 * @grpc/proto-loader and answering every ShouldRateLimit with a constant OK response, and, given
 * the RLQS proto folder, every RLQS usage report at once with ALLOW_ALL for each bucket in it.
 * Usage: node bench/dist/anchor-server.js <port> <proto dir> [<rlqs proto dir>] (the benchmark
 * transpiles it, see compiled.ts, and passes packages/ratelimit-proto's folders).
 */
const PROTO_DIR = process.argv[3];
const RLQS_DIR = process.argv[4];
if (!PROTO_DIR) throw new Error('usage: anchor-server <port> <proto dir> [<rlqs proto dir>]');
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
if (RLQS_DIR) {
  const rlqs = protoLoader.loadSync('envoy/service/rate_limit_quota/v3/rlqs.proto', {
    includeDirs: [RLQS_DIR],
    keepCase: true,
  });
  const rlqsPkg = grpc.loadPackageDefinition(rlqs) as unknown as {
    envoy: {
      service: { rate_limit_quota: { v3: { RateLimitQuotaService: grpc.ServiceClientConstructor } } };
    };
  };
  interface Report {
    bucket_quota_usages: { bucket_id: unknown }[];
  }
  server.addService(rlqsPkg.envoy.service.rate_limit_quota.v3.RateLimitQuotaService.service, {
    StreamRateLimitQuotas: (call: grpc.ServerDuplexStream<Report, unknown>) => {
      call.on('data', (report: Report) =>
        call.write({
          bucket_action: report.bucket_quota_usages.map((u) => ({
            bucket_id: u.bucket_id,
            quota_assignment_action: {
              assignment_time_to_live: { seconds: 15 },
              rate_limit_strategy: { blanket_rule: 'ALLOW_ALL' },
            },
          })),
        }),
      );
      call.on('end', () => call.end());
    },
  });
}
server.bindAsync(
  `127.0.0.1:${process.argv[2] ?? '9801'}`,
  grpc.ServerCredentials.createInsecure(),
  (error) => {
    if (error) throw error;
    process.stdout.write('anchor listening\n');
  },
);
process.on('SIGTERM', () => server.forceShutdown());
