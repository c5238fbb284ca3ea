import { describe, expect, it } from 'vitest';
import { RECENT_TIMER_SAMPLES, StatsRegistry } from '../../src/stats/registry.js';

describe('timers', () => {
  it('hands the samples since the last drain to the statsd sink, oldest first, then none', () => {
    const registry = new StatsRegistry();
    const timer = registry.timer('t');
    for (const ms of [3, 1, 2]) timer.record(ms);
    expect(registry.drainTimers().get('t')).toEqual([3, 1, 2]);
    expect(registry.drainTimers().has('t')).toBe(false);
    timer.record(7);
    expect(registry.drainTimers().get('t')).toEqual([7]);
  });

  it(`keeps the newest ${RECENT_TIMER_SAMPLES} samples between drains, while count and sum keep every one`, () => {
    const registry = new StatsRegistry();
    const timer = registry.timer('t');
    const recorded = RECENT_TIMER_SAMPLES + 2_345;
    for (let i = 0; i < recorded; i++) timer.record(i);
    const held = registry.drainTimers().get('t') ?? [];
    expect(held).toHaveLength(RECENT_TIMER_SAMPLES);
    expect(held[0]).toBe(2_345);
    expect(held.at(-1)).toBe(recorded - 1);
    expect(held.every((ms, i) => i === 0 || ms === held[i - 1]! + 1)).toBe(true);
    expect(registry.snapshot().timers.get('t')).toEqual({
      count: recorded,
      sumMs: (recorded * (recorded - 1)) / 2,
    });
    // After a wrapped ring is drained, recording starts over in order.
    timer.record(1.5);
    timer.record(0.25);
    expect(registry.drainTimers().get('t')).toEqual([1.5, 0.25]);
  });

  it('keeps nothing when stats are disabled', () => {
    const registry = new StatsRegistry(true);
    registry.timer('t').record(5);
    expect(registry.drainTimers().size).toBe(0);
    expect(registry.snapshot().timers.size).toBe(0);
  });
});
