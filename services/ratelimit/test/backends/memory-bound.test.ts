import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBackend, StoreFullError } from '../../src/backends/memory.js';
import { parseBackendSettings } from '../../src/settings/backend.js';
import { type RunningApp, startApp } from '../integration/app-harness.js';

const op = (key: string, hits = 1) => ({ key, hits, ttlSeconds: 60, perSecond: false });
const tb = (key: string) => ({
  key,
  algorithm: 'token_bucket' as const,
  hits: 1,
  limit: 5,
  burst: 5,
  windowMs: 60_000,
  subWindows: 10,
  jitterMs: 0,
  perSecond: false,
});

describe('MEMORY_MAX_KEYS: the in-process store holds a bounded number of live keys', () => {
  it('a call needing a key beyond the bound fails before counting anything; expired keys make room', () => {
    let nowMs = 1_700_000_000_000;
    const store = new MemoryBackend({ now: () => nowMs, maxKeys: 3 });
    expect(store.incrementSync([op('a'), op('b')])).toEqual([1, 1]);
    expect(store.admitSync([tb('t')], nowMs)[0]!.admitted).toBe(true);
    // Known keys are still counted at the bound.
    expect(store.incrementSync([op('a'), op('b')])).toEqual([2, 2]);
    expect(() => store.incrementSync([op('a'), op('c')])).toThrow(StoreFullError);
    expect(() => store.admitSync([tb('u')], nowMs)).toThrow(/MEMORY_MAX_KEYS \(3\)/);
    // Nothing of the refused call was counted.
    expect(store.incrementSync([op('a', 0)])).toEqual([2]);
    nowMs += 61_000;
    expect(store.incrementSync([op('c'), op('d')])).toEqual([1, 1]);
    expect(store.size()).toBeLessThanOrEqual(3);
  });

  it('is a setting of the memory backend only, validated at start', () => {
    expect(parseBackendSettings({}).memoryMaxKeys).toBe(2_000_000);
    expect(parseBackendSettings({ MEMORY_MAX_KEYS: '10' }).memoryMaxKeys).toBe(10);
    expect(() => parseBackendSettings({ MEMORY_MAX_KEYS: '0' })).toThrow(/MEMORY_MAX_KEYS/);
    expect(() => parseBackendSettings({ MEMORY_MAX_KEYS: '10', KVSTORE_URL: '127.0.0.1:6379' })).toThrow(
      /MEMORY_MAX_KEYS is a setting of BACKEND_TYPE=memory/,
    );
  });

  describe('over HTTP', () => {
    const running: RunningApp[] = [];
    afterEach(async () => {
      for (const app of running.splice(0)) await app.close();
    });
    const RULES =
      'domain: d\ndescriptors:\n  - key: user\n    rate_limit: { unit: day, requests_per_unit: 100 }\n';
    const call = (app: RunningApp, user: string) =>
      fetch(`${app.http}/json`, {
        method: 'POST',
        body: JSON.stringify({ domain: 'd', descriptors: [{ entries: [{ key: 'user', value: user }] }] }),
      });

    it('new descriptor values past the bound get BACKEND_FAILURE_MODE answers; known ones are still counted', async () => {
      const error = await startApp({ 'r.yaml': RULES }, { MEMORY_MAX_KEYS: '2' });
      const allow = await startApp(
        { 'r.yaml': RULES },
        { MEMORY_MAX_KEYS: '2', BACKEND_FAILURE_MODE: 'allow' },
      );
      running.push(error, allow);
      for (const app of [error, allow]) {
        for (const user of ['u1', 'u2']) expect((await call(app, user)).status).toBe(200);
      }
      const refused = await call(error, 'u3');
      // The reference answers a backend failure with HTTP 400 (gRPC UNKNOWN).
      expect(refused.status).toBe(400);
      expect(await refused.text()).toMatch(/backend/i);
      const allowed = await call(allow, 'u3');
      expect(allowed.status).toBe(200);
      expect(((await allowed.json()) as { overallCode: string }).overallCode).toBe('OK');
      const known = (await (await call(error, 'u1')).json()) as { statuses: { limitRemaining: number }[] };
      expect(known.statuses[0]!.limitRemaining).toBe(98);
    });
  });
});
