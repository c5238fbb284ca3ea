import { fork } from 'node:child_process';
import type { BenchKey } from './keys.js';

/** What the signed-request load generator (bench/e2e-client.mjs) reports. */
export interface OrderLoadResult {
  /** CPU seconds the generator's process used. */
  readonly cpuSeconds: number;
  readonly requests: number;
  readonly errors: number;
  /** The answers other than 200, by status. */
  readonly errorStatuses: Readonly<Record<string, number>>;
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
}

/**
 * Runs bench/e2e-client.mjs in a child process for `ms`: signed v3 requests to `path` (crossing
 * btcuah orders), one connection per key, each key's requests signed before the clock starts.
 * `start`: the clock starts when it resolves, after the signing (given `prepared`, the call to make
 * once this generator has signed), so that generators run side by side measure the same window.
 */
export function runOrderLoad(
  url: string,
  path: string,
  keys: readonly BenchKey[],
  ms: number,
  barrier?: { prepared: () => void; start: Promise<void> },
): Promise<OrderLoadResult> {
  return new Promise<OrderLoadResult>((resolve, reject) => {
    const child = fork(new URL('../e2e-client.mjs', import.meta.url), { execArgv: [] });
    child.on('message', (message: OrderLoadResult | { prepared: true }) => {
      if (!('prepared' in message)) {
        resolve(message);
        return;
      }
      barrier?.prepared();
      void barrier?.start.then(() => child.send('go'));
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`load generator exited with ${code}`)));
    child.send({ url, path, keys, ms, perKey: Math.ceil((ms / 1000) * 500), barrier: barrier !== undefined });
  });
}
