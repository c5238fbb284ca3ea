import { seedName, testSeeds } from '@platform/testkit/seeds';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/ledger/reconcile.js';
import type { OrderRequest } from '../../src/orders/requests.js';
import { OrderService } from '../../src/orders/service.js';
import { accountWithKey, credit } from '../support/accounts.js';
import { reference, type Target } from '../support/targets.js';

/** A small seeded generator, so a failing run can be repeated (the seed is in the test name). */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)) };
}

/** Mid price, price step and amount range in engine units per market used by the run. */
const MARKETS = {
  btcuah: { mid: 1_500_000, step: 1_000, amount: [1_000, 50_000] },
  ethuah: { mid: 80_000, step: 20, amount: [100, 5_000] },
  btcusdt: { mid: 3_700_000, step: 100, amount: [1_000, 50_000] },
  ethbtc: { mid: 55_000, step: 100, amount: [100, 5_000] },
} as const;
type MarketId = keyof typeof MARKETS;

const FUNDS: Record<string, bigint> = {
  btc: 10n * 10n ** 10n,
  eth: 100n * 10n ** 8n,
  uah: 5_000_000n * 10n ** 6n,
  usdt: 200_000n * 10n ** 8n,
};

async function totals(target: Target): Promise<Map<string, bigint>> {
  const { rows } = await target.db().query<{ currency: string; total: string }>(
    `SELECT b.currency, sum(b.available + b.locked)::text AS total FROM balances b
         JOIN accounts a ON a.id = b.account_id WHERE a.system_code IS DISTINCT FROM 'external'
        GROUP BY b.currency ORDER BY 1`,
  );
  return new Map(rows.map((r) => [r.currency, BigInt(r.total)]));
}

/**
 * Service-level invariants under random concurrent traffic: thousands of orders and cancels from
 * many accounts over four markets sharing currencies, in waves submitted concurrently (so the
 * writers group-commit and cross-market batches contend for the same balances).
 */
export function invariantsContract(
  target: Target,
  options: { waves: number; perWave: number; pipelineDepth?: number },
): void {
  const depth = options.pipelineDepth ?? 1;
  describe(`order service invariants (${target.name}, ${depth} batch${depth > 1 ? 'es' : ''} in flight)`, () => {
    let service: OrderService;
    const accounts: number[] = [];
    /** The API key of each account (same index), whose nonces some requests carry. */
    const keys: number[] = [];
    let clock = 1_700_000_000_000;
    const now = () => clock;
    /**
     * Nonces carried by the random orders, shared by every seed's case: the keys outlive a case, so a
     * case starting again from 1 would find its nonces used by the previous one.
     */
    let nonceSeq = 0;

    beforeAll(async () => {
      for (let i = 0; i < 6; i += 1) {
        const { account, keyId } = await accountWithKey(target.db(), ['read', 'trade']);
        for (const [currency, amount] of Object.entries(FUNDS))
          await credit(target.db(), account.id, currency, amount);
        accounts.push(account.id);
        keys.push(keyId);
      }
      service = await OrderService.start({ db: target.db(), reference, now, pipelineDepth: depth });
    });
    afterAll(async () => {
      await service?.close();
    });

    /** Ledger locked funds equal what the live orders of the engines hold, account by account. */
    async function checkLocks(): Promise<void> {
      const expected = new Map<string, bigint>();
      const add = (key: string, amount: bigint) => expected.set(key, (expected.get(key) ?? 0n) + amount);
      let live = 0;
      for (const market of service.markets.values()) {
        const snapshot = service.writer(market.id)!.book.snapshot();
        for (const order of [...snapshot.book, ...snapshot.stops]) {
          live += 1;
          const remaining = BigInt(order.remaining);
          if (order.side === 'buy')
            add(`${order.account}:${market.quote}`, market.quoteToLedger(BigInt(order.price) * remaining));
          else add(`${order.account}:${market.base}`, market.baseToLedger(remaining));
        }
      }
      const { rows } = await target
        .db()
        .query<{ account_id: number; currency: string; locked: string }>(
          'SELECT account_id, currency, locked::text FROM balances WHERE locked <> 0',
        );
      const actual = new Map(rows.map((r) => [`${r.account_id}:${r.currency}`, BigInt(r.locked)]));
      expect(actual).toEqual(expected);
      const waiting = await target
        .db()
        .query<{ n: number }>("SELECT count(*)::int AS n FROM orders WHERE state = 'wait'");
      expect(waiting.rows[0]!.n).toBe(live);
    }

    for (const seed of testSeeds([7]))
      it(`keeps every invariant after each wave of random orders and cancels, and rebuilds every book exactly (${seedName(seed)})`, async () => {
        const rng = random(seed);
        const before = await totals(target);
        const placed: number[] = [];
        /** Owner of each placed order, to know what a cancel must answer. */
        const owners = new Map<number, number>();
        const cancels = { ok: 0, foreign: 0, closed: 0 };
        /** Per key: nonces accepted, with the id of the order they placed (ids follow acceptance). */
        const acceptedNonces = new Map<number, { value: number; orderId: number }[]>();
        /** Per key: every nonce a batch used (accepted orders, and orders refused for funds). */
        const usedNonces = new Map<number, number[]>();
        let refusedFunds = 0;
        let trades = 0;
        for (let wave = 0; wave < options.waves; wave += 1) {
          clock += rng.int(1, 5_000);
          const calls: Promise<unknown>[] = [];
          for (let i = 0; i < options.perWave; i += 1) {
            const who = rng.int(0, accounts.length - 1);
            const accountId = accounts[who]!;
            const marketId = Object.keys(MARKETS)[rng.int(0, 3)] as MarketId;
            const m = MARKETS[marketId];
            const side = rng.next() < 0.5 ? 'buy' : 'sell';
            const roll = rng.next();
            const amount = BigInt(rng.int(m.amount[0], m.amount[1]));
            const price = BigInt(m.mid + rng.int(-10, 10) * m.step);
            let request: OrderRequest | undefined;
            if (roll < 0.25 && placed.length > 0) {
              const id = placed[rng.int(0, placed.length - 1)]!;
              calls.push(
                service.cancel(accountId, id).then((outcome) => {
                  if (outcome.ok) {
                    expect(outcome.order).toMatchObject({ id, accountId, state: 'cancel' });
                    cancels.ok += 1;
                  } else if (owners.get(id) !== accountId) {
                    // Another account's order: not found, whatever its state.
                    expect(outcome.code).toBe('ORDER_NOT_FOUND');
                    cancels.foreign += 1;
                  } else {
                    expect(['ORDER_ALREADY_FILLED', 'ORDER_ALREADY_CANCELLED']).toContain(outcome.code);
                    cancels.closed += 1;
                  }
                }),
              );
              continue;
            }
            if (roll < 0.8)
              request = {
                type: 'limit',
                accountId,
                side,
                price,
                amount: roll < 0.3 ? amount * 1_000n : amount,
              };
            else if (roll < 0.88) request = { type: 'market', accountId, side, amount };
            else if (roll < 0.93)
              request = { type: 'market_by_quote', accountId, side, quote: price * amount };
            else request = { type: 'limit_stop_loss', accountId, side, price, stopPrice: price, amount };
            // Half the orders carry their key's next nonce (increasing in the order they are sent).
            const keyId = keys[who]!;
            const withNonce = rng.next() < 0.5;
            if (withNonce) nonceSeq += 1;
            const nonce = withNonce
              ? { keyId, protocol: 'v3' as const, value: 1_000 + nonceSeq, consumed: false }
              : undefined;
            calls.push(
              service.place(marketId, request, nonce).then((outcome) => {
                if (outcome.ok) {
                  placed.push(outcome.order.id);
                  owners.set(outcome.order.id, accountId);
                  if (nonce) {
                    const list = acceptedNonces.get(keyId) ?? [];
                    list.push({ value: nonce.value, orderId: outcome.order.id });
                    acceptedNonces.set(keyId, list);
                    usedNonces.set(keyId, [...(usedNonces.get(keyId) ?? []), nonce.value]);
                  }
                } else if (outcome.code === 'INSUFFICIENT_FUNDS') {
                  refusedFunds += 1;
                  // Refused after its nonce was checked: the nonce is used all the same.
                  if (nonce) usedNonces.set(keyId, [...(usedNonces.get(keyId) ?? []), nonce.value]);
                } else if (!nonce || outcome.code !== 'NONCE_REUSED')
                  throw new Error(`unexpected refusal ${outcome.code}: ${outcome.message}`);
              }),
            );
          }
          await Promise.all(calls);
          const report = await reconcile(target.db());
          expect(report.problems).toEqual([]);
          expect(await totals(target)).toEqual(before);
          await checkLocks();
        }
        const overfilled = await target
          .db()
          .query<{ n: number }>(
            'SELECT count(*)::int AS n FROM orders WHERE amount IS NOT NULL AND executed > amount',
          );
        expect(overfilled.rows[0]!.n).toBe(0);
        const selfTrades = await target
          .db()
          .query<{ n: number }>('SELECT count(*)::int AS n FROM trades WHERE buy_account = sell_account');
        expect(selfTrades.rows[0]!.n).toBe(0);
        trades = (await target.db().query<{ n: number }>('SELECT count(*)::int AS n FROM trades')).rows[0]!.n;
        expect(trades).toBeGreaterThan(50);
        expect(refusedFunds).toBeGreaterThan(0);
        // Cancels were answered as their targets required: own live orders cancelled, others' not found.
        expect(cancels.ok).toBeGreaterThan(0);
        expect(cancels.foreign).toBeGreaterThan(0);
        // Each key's nonces were used once each, accepted in increasing order, and the largest is recorded.
        let accepted = 0;
        for (const [keyId, list] of acceptedNonces) {
          const values = [...list].sort((a, b) => a.orderId - b.orderId).map((n) => n.value);
          expect(values).toEqual([...values].sort((a, b) => a - b));
          const used = usedNonces.get(keyId)!;
          expect(new Set(used).size).toBe(used.length);
          const stored = await target
            .db()
            .query<{ last: string }>('SELECT last_nonce_v3::text AS last FROM api_keys WHERE id = $1', [
              keyId,
            ]);
          expect(Number(stored.rows[0]!.last)).toBe(Math.max(...used));
          accepted += values.length;
        }
        expect(accepted).toBeGreaterThan(0);
        // Group commit: concurrent requests shared transactions.
        let batches = 0;
        let requests = 0;
        for (const market of service.markets.values()) {
          batches += service.writer(market.id)!.stats.batches;
          requests += service.writer(market.id)!.stats.requests;
        }
        expect(batches).toBeLessThan(requests);

        // Restart: a new service on the same database rebuilds every book exactly (orders, priority, counters).
        const snapshots = new Map(
          [...service.markets.keys()].map((id) => [id, service.writer(id)!.book.snapshot()]),
        );
        await service.close();
        service = await OrderService.start({ db: target.db(), reference, now, pipelineDepth: depth });
        for (const [id, snapshot] of snapshots) expect(service.writer(id)!.book.snapshot()).toEqual(snapshot);
        // And it keeps trading with fresh ids.
        const next = await service.place('btcuah', {
          type: 'limit',
          accountId: accounts[0]!,
          side: 'buy',
          price: 1_000n,
          amount: 1_000n,
        });
        expect(next.ok && next.order.id > Math.max(...placed)).toBe(true);
        await checkLocks();
      });
  });
}
