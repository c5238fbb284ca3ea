import { MemoryBackend } from '../../src/backends/memory.js';
import { algorithmProperties, propertyClock } from './algorithm-properties.js';

algorithmProperties(
  'in-process store',
  async () => {
    const backend = new MemoryBackend({ now: () => propertyClock.ms });
    return { backend, close: () => backend.close() };
  },
  { compareWithMemory: false },
);
