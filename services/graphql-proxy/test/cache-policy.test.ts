import { describe, expect, it } from 'vitest';
import { freshness, parseCacheControl, storedLifetime } from '../src/cache/policy.js';
import { CIRCUIT_OPEN, UpstreamMonitor } from '../src/upstream/client.js';

const types = new Map([
  ['Post', 30_000],
  ['Category', 3_600_000],
]);

describe('storedLifetime', () => {
  it('takes s-maxage, then max-age, then the smallest per-type TTL, then the default', () => {
    const life = (header: string | undefined, tags: string[] = [], shared = true) =>
      storedLifetime(parseCacheControl(header), shared, tags, types, 60_000);
    expect(life('public, max-age=10, s-maxage=20')).toBe(20_000);
    expect(life('max-age=10', ['Post'])).toBe(10_000);
    expect(life(undefined, ['Post', 'Category'])).toBe(30_000);
    expect(life(undefined, ['Category'])).toBe(3_600_000);
    expect(life(undefined, ['Tag'])).toBe(60_000);
  });

  it('does not store no-store, no-cache, max-age=0, nor private answers in the shared scope', () => {
    const life = (header: string, shared: boolean) =>
      storedLifetime(parseCacheControl(header), shared, [], types, 60_000);
    expect(life('no-store', false)).toBeUndefined();
    expect(life('no-cache', false)).toBeUndefined();
    expect(life('max-age=0', false)).toBeUndefined();
    expect(life('private, max-age=5', true)).toBeUndefined();
    expect(life('private, max-age=5', false)).toBe(5_000);
  });
});

describe('freshness with stale-while-revalidate', () => {
  it('is fresh, then revalidate, then stale, then unusable; an invalidated entry is never revalidated', () => {
    const entry = { storedAt: 0, invalidated: false };
    expect(freshness(entry, 999, 1000, 10_000, 2000)).toBe('fresh');
    expect(freshness(entry, 1500, 1000, 10_000, 2000)).toBe('revalidate');
    expect(freshness(entry, 3500, 1000, 10_000, 2000)).toBe('stale');
    expect(freshness(entry, 11_000, 1000, 10_000, 2000)).toBe('unusable');
    expect(freshness({ storedAt: 0, invalidated: true }, 500, 1000, 10_000, 2000)).toBe('stale');
  });
});

describe('circuit breaker', () => {
  it('opens after the threshold of consecutive failures and closes on the first answer', () => {
    const monitor = new UpstreamMonitor(2);
    const down = { kind: 'unavailable', reason: 'refused' } as const;
    const up = { kind: 'answered', status: 200, text: '{}', body: {} } as const;
    monitor.record(down);
    expect(monitor.allows()).toBe(true);
    monitor.record(up);
    monitor.record(down);
    expect(monitor.breakerState).toBe('closed');
    monitor.record(down);
    expect(monitor.breakerState).toBe('open');
    monitor.record(CIRCUIT_OPEN); // an answer given without the upstream changes nothing
    expect(monitor.allows()).toBe(false);
    monitor.record(up);
    expect(monitor.breakerState).toBe('closed');
    expect(monitor.state).toBe('online');
  });
});
