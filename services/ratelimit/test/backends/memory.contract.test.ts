import { MemoryBackend } from '../../src/backends/memory.js';
import { counterBackendContract } from './contract.js';

counterBackendContract('in-process store', async () => {
  let nowMs = 1_700_000_000_000;
  const backend = new MemoryBackend({ now: () => nowMs });
  return {
    backend,
    advanceSeconds: async (s) => {
      nowMs += s * 1000;
    },
    close: () => backend.close(),
  };
});
