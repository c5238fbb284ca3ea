import { setTimeout as sleep } from 'node:timers/promises';

/** Polls `url` until it answers with a status below 500, or throws after `timeoutMs`. */
export async function waitForHttp(url: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.status < 500) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await sleep(50);
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms (${last})`);
}
