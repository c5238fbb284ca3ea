import { setTimeout as sleep } from 'node:timers/promises';
import { useRedis } from '@platform/testkit/fixtures';
import { createBackend } from '../../src/backends/create.js';
import { parseBackendSettings } from '../../src/settings/backend.js';
import { counterBackendContract } from './contract.js';

const redis = useRedis();

counterBackendContract('redis single (KVSTORE_TYPE=single)', async () => {
  const backend = createBackend(
    parseBackendSettings({
      KVSTORE_URL: `${redis.host}:${redis.port}`,
      KVSTORE_POOL_SIZE: '2',
      BACKEND_TYPE: 'redis',
    }),
  );
  return {
    backend,
    advanceSeconds: (s) => sleep(s * 1000 + 100),
    close: () => backend.close(),
  };
});

counterBackendContract(
  'redis single with implicit pipelining (KVSTORE_PIPELINE_WINDOW=2ms, LIMIT=4)',
  async () => {
    const backend = createBackend(
      parseBackendSettings({
        KVSTORE_URL: `${redis.host}:${redis.port}`,
        KVSTORE_POOL_SIZE: '1',
        KVSTORE_PIPELINE_WINDOW: '2ms',
        KVSTORE_PIPELINE_LIMIT: '4',
      }),
    );
    return {
      backend,
      advanceSeconds: (s) => sleep(s * 1000 + 100),
      close: () => backend.close(),
    };
  },
);

counterBackendContract('redis single with implicit pipelining (KVSTORE_PIPELINE_WINDOW=100us)', async () => {
  const backend = createBackend(
    parseBackendSettings({ KVSTORE_URL: `${redis.host}:${redis.port}`, KVSTORE_PIPELINE_WINDOW: '100us' }),
  );
  return {
    backend,
    advanceSeconds: (s) => sleep(s * 1000 + 100),
    close: () => backend.close(),
  };
});
