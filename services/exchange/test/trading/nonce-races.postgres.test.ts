import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeferredNonce } from '../../src/http/request-context.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { OrderService } from '../../src/orders/service.js';
import { accountWithKey, credit } from '../support/accounts.js';
import { reference, usePostgresTarget } from '../support/targets.js';

const target = usePostgresTarget();

/**
 * One API key's nonces raced over two markets: each market has its own writer, and with
 * ORDER_PIPELINE_DEPTH=2 a batch is computed on nonces that a batch still in flight will record.
 * Whatever the interleaving, a nonce value is accepted at most once, the accepted values were
 * accepted in increasing order, and the stored last nonce is the largest accepted.
 */
describe.each([1, 2])('nonce races across two markets (postgres, %i batches in flight)', (depth) => {
  let service: OrderService;
  let accountId: number;
  let keyId: number;
  beforeAll(async () => {
    const owner = await accountWithKey(target.db(), ['read', 'trade']);
    accountId = owner.account.id;
    keyId = owner.keyId;
    await credit(target.db(), accountId, 'btc', 10n ** 10n);
    await credit(target.db(), accountId, 'eth', 10n ** 10n);
    service = await OrderService.start({
      db: target.db(),
      reference,
      now: () => 1_700_000_000_000,
      pipelineDepth: depth,
    });
  });
  afterAll(async () => {
    await service?.close();
  });

  it('accepts each nonce once, in increasing order, and records the largest', async () => {
    const accepted: { value: number; at: number }[] = [];
    let answered = 0;
    const nonce = (value: number): DeferredNonce => ({ keyId, protocol: 'v3', value, consumed: false });
    const ask = (market: 'btcuah' | 'ethuah', value: number, price: bigint) =>
      service
        .place(market, { type: 'limit', accountId, side: 'sell', price, amount: 1_000n }, nonce(value))
        .then((outcome) => {
          answered += 1;
          if (outcome.ok) accepted.push({ value, at: outcome.order.id });
          else expect(outcome.code).toBe('NONCE_REUSED');
        });
    // Every value goes to both markets at once, in waves, some waves out of order: both writers
    // keep batches going while the other's are in flight.
    const calls: Promise<void>[] = [];
    for (let wave = 0; wave < 10; wave += 1) {
      const values = Array.from({ length: 8 }, (_, i) => 1_000 + wave * 8 + (wave % 2 === 0 ? i : 7 - i));
      for (const value of values) {
        calls.push(ask('btcuah', value, 90_000_000n + BigInt(value)));
        calls.push(ask('ethuah', value, 9_000_000n + BigInt(value)));
      }
      if (wave % 3 === 0) await Promise.all(calls.splice(0));
    }
    await Promise.all(calls);
    expect(answered).toBe(160);
    const values = accepted.map((a) => a.value);
    expect(new Set(values).size).toBe(values.length);
    expect(values.length).toBeGreaterThan(10);
    // Order ids follow the order in which requests were accepted (one id sequence for all markets).
    const byId = [...accepted].sort((a, b) => a.at - b.at).map((a) => a.value);
    expect(byId).toEqual([...byId].sort((a, b) => a - b));
    const stored = await target
      .db()
      .query<{ last: string }>('SELECT last_nonce_v3::text AS last FROM api_keys WHERE id = $1', [keyId]);
    expect(Number(stored.rows[0]!.last)).toBe(Math.max(...values));
    // Each accepted order is stored once, and nothing else of the key's account is.
    const orders = await target
      .db()
      .query<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE account_id = $1`, [accountId]);
    expect(orders.rows[0]!.n).toBe(values.length);
    expect((await reconcile(target.db())).problems).toEqual([]);
  });
});
