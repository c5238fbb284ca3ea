import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `probe` every `intervalMs` until it gives a value (anything but `undefined` or `false`) and
 * returns it; after `timeoutMs` throws `timed out waiting for <what>`. For states a test cannot
 * await directly: a process gone, a row written by another process, a zombie.
 */
export async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 60_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}
