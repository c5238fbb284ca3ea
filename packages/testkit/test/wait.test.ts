import { describe, expect, it } from 'vitest';
import { processState } from '../src/cpu.js';
import { until } from '../src/wait.js';

describe('until', () => {
  it('returns the first value the probe gives, sync or async', async () => {
    let calls = 0;
    expect(await until('the third call', () => (++calls >= 3 ? calls : undefined), 5_000, 1)).toBe(3);
    expect(await until('true', async () => true)).toBe(true);
  });

  it('throws naming what it waited for after the timeout', async () => {
    await expect(until('nothing', () => false, 20, 5)).rejects.toThrow('timed out waiting for nothing');
  });
});

describe('processState', () => {
  it("reads this process's state, and undefined for a pid that does not exist", () => {
    expect(processState(process.pid)).toMatch(/^[RS]$/);
    expect(processState(2 ** 22 + 1)).toBeUndefined();
  });
});
