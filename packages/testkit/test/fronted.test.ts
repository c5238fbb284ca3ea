import { describe, expect, it } from 'vitest';
import { launchOnFreePort } from '../src/fronted.js';
import type { ManagedProcess } from '../src/process.js';

const fakeProcess = { name: 'fake' } as ManagedProcess; // only passed through, never used

describe('launchOnFreePort', () => {
  it('tries another port when the probed one was taken before the server bound it', async () => {
    const tried: number[] = [];
    const started = await launchOnFreePort(async (port) => {
      tried.push(port);
      if (tried.length === 1) throw new Error('bind: Address already in use');
      return fakeProcess;
    }, 0);
    expect(tried).toHaveLength(2);
    expect(started.port).toBe(tried[1]);
  });

  it('does not retry other start failures', async () => {
    let calls = 0;
    await expect(
      launchOnFreePort(async () => {
        calls++;
        throw new Error('bad argument');
      }, 0),
    ).rejects.toThrow('bad argument');
    expect(calls).toBe(1);
  });
});
