/**
 * When a failed message is tried again (pure: the randomness and the clock are arguments). The
 * schedule is Standard Webhooks' advice with ±20% jitter, so receivers that failed together are not
 * retried together; a `retry-after` answer is honoured (the next attempt is no sooner than it says,
 * at most a day away).
 */

/** Longest `retry-after` honoured. */
export const RETRY_AFTER_MAX_MS = 86_400_000;

/**
 * Milliseconds until the next attempt after `failedAttempts` failures (1 after the first), or null
 * when the schedule is used up and the message is given up.
 */
export function retryDelayMs(
  failedAttempts: number,
  scheduleSeconds: readonly number[],
  random: () => number,
  retryAfterMs?: number,
): number | null {
  const step = scheduleSeconds[failedAttempts - 1];
  if (step === undefined) return null;
  const jittered = Math.round(step * 1000 * (0.8 + 0.4 * random()));
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, RETRY_AFTER_MAX_MS));
}

/** `retry-after` (RFC 9110 10.2.3): delay-seconds or an HTTP-date; milliseconds from `now`. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date) || !/[A-Za-z]/.test(text)) return undefined;
  return Math.max(0, date - now.getTime());
}

/** Total time a message is retried for (without jitter), for the README's claim and a test. */
export function scheduleSpanSeconds(scheduleSeconds: readonly number[]): number {
  return scheduleSeconds.reduce((sum, step) => sum + step, 0);
}
