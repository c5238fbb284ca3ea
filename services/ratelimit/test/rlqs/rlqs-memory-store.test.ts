import { afterEach, describe, expect, it } from 'vitest';
import { StoreFullError } from '../../src/backends/memory.js';
import { MemoryQuotaStore, type QuotaReport } from '../../src/rlqs/store.js';

const report = (key: string, member: string, allowed: number, leave = false): QuotaReport => ({
  key,
  member,
  allowed,
  windowSeconds: 60,
  leave,
});

describe('RLQS in-process quota state: bounded', () => {
  const stores: MemoryQuotaStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  it('a counter no one takes part in and with nothing counted is forgotten at once', () => {
    const store = new MemoryQuotaStore(15_000, () => 0, 10);
    stores.push(store);
    const now = 1_700_000_000_000;
    expect(store.reportSync([report('k', 'm1', 0)], now)).toEqual([{ participants: 1, usage: 0 }]);
    expect(store.reportSync([report('k', 'm1', 0, true)], now)).toEqual([{ participants: 0, usage: 0 }]);
    // Usage is kept until the window ends, even with nobody taking part.
    store.reportSync([report('u', 'm1', 5)], now);
    store.reportSync([report('u', 'm1', 0, true)], now);
    expect(store.reportSync([report('u', 'm2', 0)], now)).toEqual([{ participants: 1, usage: 5 }]);
  });

  it('a report needing a counter past MEMORY_MAX_KEYS fails whole; ended windows make room', () => {
    let clock = 1_700_000_000_000;
    const store = new MemoryQuotaStore(15_000, () => clock, 2);
    stores.push(store);
    store.reportSync([report('a', 'm', 1), report('b', 'm', 1)], clock);
    expect(() => store.reportSync([report('a', 'm', 1), report('c', 'm', 1)], clock)).toThrow(StoreFullError);
    // Nothing of the refused report was applied: `a` still holds 1.
    expect(store.reportSync([report('a', 'm', 0)], clock)).toEqual([{ participants: 1, usage: 1 }]);
    // The participants left and their window ended: the counters go, and `c` fits.
    store.reportSync([report('a', 'm', 0, true), report('b', 'm', 0, true)], clock);
    clock += 61_000;
    expect(store.reportSync([report('c', 'm', 1)], clock)).toEqual([{ participants: 1, usage: 1 }]);
  });
});
