import { describe, expect, it } from 'vitest';
import { ORDERED_CONNECTION_NAME } from '../../src/db/postgres.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { OrderService } from '../../src/orders/service.js';
import { credit, newAccount } from '../support/accounts.js';
import { reference, usePostgresTarget } from '../support/targets.js';

const target = usePostgresTarget();
const now = () => 1_700_000_000_000;

/** The order writers' own connections to this test's database, as PostgreSQL lists them. */
async function writerBackends(): Promise<number[]> {
  const { rows } = await target
    .db()
    .query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1',
      [ORDERED_CONNECTION_NAME],
    );
  return rows.map((row) => row.pid);
}

describe('order writers connection (postgres)', () => {
  it('is replaced when PostgreSQL ends it: orders go on, and the book is the one the stored log rebuilds', async () => {
    const db = target.db();
    const maker = (await newAccount(db)).id;
    await credit(db, maker, 'btc', 10n ** 10n);
    const service = await OrderService.start({ db, reference, now });
    try {
      const ask = (price: bigint) =>
        service.place('btcuah', { type: 'limit', accountId: maker, side: 'sell', price, amount: 10_000n });
      expect((await ask(2_000_000n)).ok).toBe(true);
      const [first, ...others] = await writerBackends();
      expect(others).toEqual([]);
      await db.query('SELECT pg_terminate_backend($1)', [first]);
      // At most the first order fails (its statement went out on the ended connection, so the writer
      // rebuilds from the log); the next ones go through a new connection.
      const outcomes: (boolean | 'error')[] = [];
      for (let i = 1n; i <= 3n; i += 1n) {
        outcomes.push(
          await ask(2_000_000n + i).then(
            (outcome) => outcome.ok,
            () => 'error' as const,
          ),
        );
      }
      expect(outcomes.slice(1)).toEqual([true, true]);
      expect([true, 'error']).toContain(outcomes[0]);
      const replaced = await writerBackends();
      expect(replaced).toHaveLength(1);
      expect(replaced[0]).not.toBe(first);
      const reopened = await OrderService.start({ db, reference, now });
      expect(reopened.writer('btcuah')!.book.snapshot()).toEqual(service.writer('btcuah')!.book.snapshot());
      await reopened.close();
      expect((await reconcile(db)).problems).toEqual([]);
    } finally {
      await service.close();
    }
    // Closing the service gives its connection back.
    expect(await writerBackends()).toEqual([]);
  });
});
