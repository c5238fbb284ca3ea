import { describe, expect, it } from 'vitest';
import { seedName, testSeeds } from '../src/seeds.js';

describe('testSeeds', () => {
  it('runs the fixed seeds when nothing is set', () => {
    expect(testSeeds([1, 2], {})).toEqual([1, 2]);
  });

  it('adds one fresh seed in CI', () => {
    const seeds = testSeeds([1, 2], { CI: 'true' });
    expect(seeds.slice(0, 2)).toEqual([1, 2]);
    expect(seeds).toHaveLength(3);
    expect(Number.isSafeInteger(seeds[2])).toBe(true);
  });

  it('takes TEST_SEED instead, one or a list, and refuses a non-integer', () => {
    expect(testSeeds([1, 2], { TEST_SEED: '77', CI: 'true' })).toEqual([77]);
    expect(testSeeds([1], { TEST_SEED: '5, 6' })).toEqual([5, 6]);
    expect(() => testSeeds([1], { TEST_SEED: 'x' })).toThrow(/TEST_SEED/);
  });

  it('names a case after its seed and the way to repeat it', () => {
    expect(seedName(9)).toBe('seed 9 (repeat with TEST_SEED=9)');
  });
});
