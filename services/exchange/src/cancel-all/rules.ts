/** Largest `timeout` of `POST /v3/order/cancel-all-after` (Kraken's: one day). */
export const MAX_TIMEOUT_S = 86_400;

/** The seconds of a `timeout` as sent (a JSON integer or its digits), or why it is not one. */
export function timeoutSeconds(value: number | string): { ok: true; seconds: number } | { ok: false } {
  const seconds = typeof value === 'number' ? value : /^[0-9]{1,6}$/.test(value) ? Number(value) : Number.NaN;
  return Number.isInteger(seconds) && seconds >= 0 && seconds <= MAX_TIMEOUT_S
    ? { ok: true, seconds }
    : { ok: false };
}

/** When a switch armed at `now` with `seconds` fires (null: 0 disables it). */
export function triggerAt(now: number, seconds: number): number | null {
  return seconds === 0 ? null : now + seconds * 1000;
}

/**
 * Kraken's answer: both times in RFC 3339 (UTC, milliseconds); a disabled switch's trigger is "0",
 * as Kraken answers it.
 */
export function switchAnswer(
  now: number,
  trigger: number | null,
): { current_time: string; trigger_time: string } {
  return {
    current_time: new Date(now).toISOString(),
    trigger_time: trigger === null ? '0' : new Date(trigger).toISOString(),
  };
}
