import { useRedis } from '@platform/testkit/fixtures';
import { createBackend } from '../../src/backends/create.js';
import { parseBackendSettings } from '../../src/settings/backend.js';
import { algorithmProperties } from './algorithm-properties.js';

const redis = useRedis();

algorithmProperties(
  'redis single (one script call per request, clock from the caller)',
  async () => {
    const backend = createBackend(
      parseBackendSettings({ KVSTORE_URL: `${redis.host}:${redis.port}`, KVSTORE_POOL_SIZE: '2' }),
    );
    return { backend, close: () => backend.close() };
  },
  { compareWithMemory: true },
);
