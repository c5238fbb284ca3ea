import { MemoryLimiter } from '../../src/limits/memory-limiter.js';
import { limiterContract } from './limiter.contract.js';

limiterContract('in-process', async () => {
  const limiter = new MemoryLimiter();
  return { limiter, stop: () => limiter.close() };
});
