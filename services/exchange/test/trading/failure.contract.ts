import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/ledger/reconcile.js';
import { balancesOf } from '../../src/ledger/store.js';
import { OrderService } from '../../src/orders/service.js';
import { credit, newAccount } from '../support/accounts.js';
import { reference, type Target } from '../support/targets.js';

/**
 * A batch whose transaction fails (here: a trigger refusing trades at one price, a real database
 * error) leaves no trace: its callers get the error, the engine is rebuilt from the stored log, the
 * ledger is untouched, and the same orders succeed once the database accepts them.
 */
export function failureContract(target: Target): void {
  describe(`failed batch (${target.name})`, () => {
    let service: OrderService;
    let maker: number;
    let taker: number;
    beforeAll(async () => {
      maker = (await newAccount(target.db())).id;
      taker = (await newAccount(target.db())).id;
      await credit(target.db(), maker, 'btc', 10n ** 10n);
      await credit(target.db(), taker, 'uah', 10n ** 14n);
      await target.db().query(`
        CREATE FUNCTION refuse_trade() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'trades refused for the test'; END $$`);
      await target.db().query(`
        CREATE TRIGGER refuse_trade BEFORE INSERT ON trades FOR EACH ROW
          WHEN (NEW.price = 1234567) EXECUTE FUNCTION refuse_trade();`);
      service = await OrderService.start({ db: target.db(), reference, now: () => 1_700_000_000_000 });
    });
    afterAll(async () => {
      await service?.close();
    });

    it('rolls the engine back to the stored state and answers the callers with the error', async () => {
      const ask = await service.place('btcuah', {
        type: 'limit',
        accountId: maker,
        side: 'sell',
        price: 1_234_567n,
        amount: 100_000n,
      });
      expect(ask.ok).toBe(true);
      const snapshot = service.writer('btcuah')!.book.snapshot();
      const balances = [await balancesOf(target.db(), maker), await balancesOf(target.db(), taker)];
      const cross = service.place('btcuah', {
        type: 'limit',
        accountId: taker,
        side: 'buy',
        price: 1_234_567n,
        amount: 50_000n,
      });
      await expect(cross).rejects.toThrow(/trades refused/);
      expect(service.writer('btcuah')!.book.snapshot()).toEqual(snapshot);
      expect([await balancesOf(target.db(), maker), await balancesOf(target.db(), taker)]).toEqual(balances);
      expect((await reconcile(target.db())).problems).toEqual([]);
      await target.db().query('DROP TRIGGER refuse_trade ON trades');
      const again = await service.place('btcuah', {
        type: 'limit',
        accountId: taker,
        side: 'buy',
        price: 1_234_567n,
        amount: 50_000n,
      });
      expect(again.ok && again.order.state).toBe('done');
      expect(service.writer('btcuah')!.book.depth().asks).toEqual([[1_234_567n, 50_000n, 1]]);
      expect((await reconcile(target.db())).problems).toEqual([]);
    });

    it('public book data shows only committed state while a batch is in flight', async () => {
      await target.db().query(`
        CREATE FUNCTION slow_trade() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_sleep(0.3); RAISE EXCEPTION 'slow trade refused'; END $$`);
      await target.db().query(`
        CREATE TRIGGER slow_trade BEFORE INSERT ON trades FOR EACH ROW
          WHEN (NEW.price = 1234500) EXECUTE FUNCTION slow_trade()`);
      const ask = await service.place('btcuah', {
        type: 'limit',
        accountId: maker,
        side: 'sell',
        price: 1_234_500n,
        amount: 100_000n,
      });
      expect(ask.ok).toBe(true);
      const writer = service.writer('btcuah')!;
      const before = writer.view();
      let settled = false;
      const cross = service
        .place('btcuah', {
          type: 'limit',
          accountId: taker,
          side: 'buy',
          price: 1_234_500n,
          amount: 100_000n,
        })
        .finally(() => {
          settled = true;
        });
      cross.catch(() => {});
      let reads = 0;
      while (!settled) {
        expect(writer.view()).toEqual(before);
        reads += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await expect(cross).rejects.toThrow(/slow trade refused/);
      expect(reads).toBeGreaterThan(0);
      expect(writer.view()).toEqual(before);
      await target.db().query('DROP TRIGGER slow_trade ON trades');
    });
  });
}
