import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { background } from '../../src/cluster/background.js';
import type { FiatDeps } from '../../src/fiat/deps.js';
import { PayoutDispatcher } from '../../src/fiat/payouts.js';

// The payout dispatcher's immediate round (kick, after a request is queued) asks the cluster's job
// gate like its poll does: a node that does not hold `fiat-payouts` never dispatches.
describe('background job gate', () => {
  afterEach(() => background.use(undefined));

  /** A dispatcher whose database only counts the statements of its rounds. */
  function dispatcher() {
    const statements: string[] = [];
    const db = {
      query: async (text: string) => {
        statements.push(text);
        return { rows: [], rowCount: 0 };
      },
    };
    const deps = { db, now: () => Date.now() } as unknown as FiatDeps;
    return { dispatcher: new PayoutDispatcher(deps, { pollMs: 60_000 }), statements };
  }

  it('kick runs no round on a node without the fiat-payouts job', async () => {
    const { dispatcher: off, statements } = dispatcher();
    background.use((job) => job !== 'fiat-payouts');
    off.kick();
    await sleep(20);
    expect(statements).toEqual([]);
    await off.stop();
  });

  it('kick runs a round on the node holding it, and counts it', async () => {
    const { dispatcher: on, statements } = dispatcher();
    background.use(() => true);
    const before = background.rounds()['fiat-payouts'] ?? 0;
    on.kick();
    await sleep(20);
    expect(statements.length).toBeGreaterThan(0);
    expect(background.rounds()['fiat-payouts']).toBe(before + 1);
    await on.stop();
  });
});
