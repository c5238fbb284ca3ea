import { GrpcLimiter } from '../../src/limits/grpc-limiter.js';
import { ratelimitConfigYaml } from '../../src/limits/ratelimit-config.js';
import { limiterContract } from './limiter.contract.js';
import { startRatelimit } from './ratelimit-process.js';

// The real services/ratelimit (a child process, in-process store) with the config generated from the
// contract's limits file, exactly as config/ratelimit/ is generated from config/limits.yaml.
limiterContract('services/ratelimit over gRPC', async (config) => {
  const service = await startRatelimit(ratelimitConfigYaml(config, 'the contract rules'));
  // A generous deadline: this suite is about decisions; the timeout path has its own tests.
  const limiter = new GrpcLimiter({ target: service.grpc, domain: config.domain, timeoutMs: 5_000 });
  return {
    limiter,
    async stop() {
      await limiter.close();
      await service.stop();
    },
  };
});
