import { describe, expect, it } from 'vitest';
import { MAX_TIMEOUT_S, switchAnswer, timeoutSeconds, triggerAt } from '../../src/cancel-all/rules.js';

describe("dead-man's switch rules", () => {
  it('takes 0..86400 whole seconds as a number or its digits, nothing else', () => {
    for (const ok of [0, 1, 60, MAX_TIMEOUT_S, '0', '60', '86400'])
      expect(timeoutSeconds(ok), String(ok)).toEqual({ ok: true, seconds: Number(ok) });
    for (const bad of [-1, 86_401, 1.5, Number.NaN, '', ' 1', '1e3', '-1', '86401', '0x10', '1234567'])
      expect(timeoutSeconds(bad), String(bad)).toEqual({ ok: false });
  });

  it('0 disables (trigger "0"); otherwise the trigger is now + timeout, both RFC 3339', () => {
    const now = Date.UTC(2026, 11, 2, 4, 0, 0, 123);
    expect(triggerAt(now, 0)).toBeNull();
    expect(triggerAt(now, 60)).toBe(now + 60_000);
    expect(switchAnswer(now, null)).toEqual({ current_time: '2026-12-02T04:00:00.123Z', trigger_time: '0' });
    expect(switchAnswer(now, now + 60_000)).toEqual({
      current_time: '2026-12-02T04:00:00.123Z',
      trigger_time: '2026-12-02T04:01:00.123Z',
    });
  });
});
