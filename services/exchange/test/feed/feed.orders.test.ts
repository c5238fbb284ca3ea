import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { reconcile } from '../../src/ledger/reconcile.js';
import { MemoryLimiter } from '../../src/limits/memory-limiter.js';
import { usePostgresTarget } from '../support/targets.js';
import { OrderSocket } from './order-socket.js';
import { useFeedApp } from './setup.js';

// Orders over the socket (docs/feed.md, Order entry): after `auth`, the REST routes' bodies, rules
// and errors; a client_order_id unique per account and asked for later; every acknowledged order
// stored once.
const target = usePostgresTarget();
const feed = useFeedApp(
  target,
  { messagesPerSecond: 1_000, messageBurst: 1_000, maxPendingOperations: 40 },
  undefined,
  undefined,
  {
    // Only the per-key rule of this test: 100 requests per second and key.
    limits: {
      config: {
        domain: 'exchange',
        rules: [{ name: 'key-second', routes: 'private', per: 'key', unit: 'second', requestsPerUnit: 100 }],
        exempt: [],
      },
      limiter: new MemoryLimiter(),
    },
  },
);
const MARKET = 'btcusdt';

describe('live feed: order entry over the socket (postgres)', () => {
  it('answers with the REST route’s body, and refuses with its errors, codes and messages', async () => {
    const trader = await feed.trader();
    const socket = await OrderSocket.open(feed.wsUrl(), trader.apiKey, trader.secret);
    const placed = await socket.op('order.submit', {
      symbol: MARKET,
      type: 'limit',
      amount: '0.01',
      price: '30000',
    });
    const order = placed.result as (string | number | null)[];
    expect(order).toHaveLength(18);
    expect(order.slice(3, 4).concat(order.slice(6, 9), order.slice(13, 14), order.slice(16, 17))).toEqual([
      MARKET,
      '0.01',
      '0.01',
      'LIMIT',
      'ACTIVE',
      '30000',
    ]);
    // The same order read back: over the socket by its id, and its REST list has it.
    expect((await socket.op('order.get', { order_id: order[0] })).result).toEqual(order);
    // order.amend: the REST route's handler; a new price keeps the id, and the answer is the amended order.
    const amended = (await socket.op('order.amend', { order_id: order[0], price: '29990' })).result as (
      | string
      | number
      | null
    )[];
    expect([amended[0], amended[6], amended[16]]).toEqual([order[0], '0.01', '29990']);
    // Each bad body: the socket's error is the REST route's, field for field.
    const bodies: [string, string, Record<string, unknown>][] = [
      ['order.submit', '/v3/auth/w/order/submit', { symbol: MARKET, type: 'limit', amount: '0.01' }],
      [
        'order.submit',
        '/v3/auth/w/order/submit',
        { symbol: 'dogeusdt', type: 'limit', amount: '1', price: '1' },
      ],
      [
        'order.submit',
        '/v3/auth/w/order/submit',
        { symbol: MARKET, type: 'limit', amount: '0.0000001', price: '1' },
      ],
      [
        'order.submit',
        '/v3/auth/w/order/submit',
        { symbol: MARKET, type: 'limit', amount: '0x1', price: '1' },
      ],
      ['order.submit', '/v3/auth/w/order/submit', { symbol: MARKET, type: 'stop', amount: '1', price: '1' }],
      [
        'order.submit',
        '/v3/auth/w/order/submit',
        { symbol: MARKET, type: 'limit', amount: '1000000', price: '30000' },
      ],
      [
        'order.submit',
        '/v3/auth/w/order/submit',
        { symbol: MARKET, type: 'limit', amount: 1, price: 1, client_order_id: 'a b' },
      ],
      ['order.cancel', '/v3/order/cancel', { order_id: 999_999_999 }],
      ['order.cancel', '/v3/order/cancel', { order_id: '0x9' }],
    ];
    for (const [op, path, body] of bodies) {
      const answer = await socket.op(op, body);
      const rest = await trader.http.v3(path, body);
      expect(rest.statusCode, `${op} ${JSON.stringify(body)}`).toBeGreaterThanOrEqual(400);
      expect(answer.error, `${op} ${JSON.stringify(body)}`).toEqual(
        (rest.json() as { error: unknown }).error,
      );
    }
    // A cancel of an order that is no longer live: cancel_failed (2003), as REST.
    const cancelled = await socket.op('order.cancel', { order_id: order[0] });
    expect(cancelled.result).toMatchObject({ id: order[0], remaining_amount: '0.01' });
    expect((await socket.op('order.cancel', { order_id: order[0] })).error).toMatchObject({
      code: 2003,
      name: 'cancel_failed',
    });
    // An operation the table does not hold: unknown_op.
    for (const name of ['order.dance'])
      expect((await socket.op(name, {})).error).toMatchObject({ code: 3301, name: 'unknown_op' });
    // order.amend is the route's handler with its body schema: without order_id, validation_failed.
    expect((await socket.op('order.amend', {})).error).toMatchObject({
      code: 1001,
      name: 'validation_failed',
    });
    socket.close();
  });

  it('order.cancel_all cancels the account’s open orders as POST /v3/order/cancel/all; socket orders carry the socket’s key', async () => {
    const trader = await feed.trader();
    const socket = await OrderSocket.open(feed.wsUrl(), trader.apiKey, trader.secret);
    const ids: number[] = [];
    for (const price of ['20000', '20001']) {
      const placed = await socket.op('order.submit', {
        symbol: MARKET,
        type: 'limit',
        amount: '0.001',
        price,
      });
      ids.push((placed.result as number[])[0]!);
    }
    const byRest = await trader.http.v3('/v3/auth/w/order/submit', {
      symbol: MARKET,
      type: 'limit',
      amount: '0.001',
      price: '20002',
    });
    ids.push((byRest.json() as number[])[0]!);
    // The dead-man's switch of the key finds them: the socket's orders are the auth key's.
    const { rows } = await target.db().query<{ id: string; key: string }>(
      `SELECT o.id::text, k.public_key AS key FROM orders o JOIN api_keys k ON k.id = o.api_key_id
        WHERE o.id = ANY($1::bigint[]) ORDER BY o.id`,
      [ids],
    );
    expect(rows.map((row) => [Number(row.id), row.key])).toEqual(ids.map((id) => [id, trader.apiKey]));
    expect((await socket.op('order.cancel_all', { market: 'nope' })).error).toMatchObject({
      code: 1007,
      name: 'unknown_market',
    });
    const cancelled = await socket.op('order.cancel_all', { market: MARKET });
    expect((cancelled.result as { id: number }[]).map((o) => o.id).sort()).toEqual([...ids].sort());
    expect((await socket.op('order.cancel_all', {})).result).toEqual([]);
    socket.close();
  });

  it('needs auth and the route’s scope; another account’s order is not found', async () => {
    const reader = await feed.trader(['read']);
    const anonymous = await feed.connect();
    anonymous.send({ op: 'order.submit', id: 'x', params: { symbol: MARKET } });
    expect(await anonymous.next((f) => f.id === 'x')).toEqual({
      id: 'x',
      error: { code: 3304, name: 'not_authenticated', message: 'order.submit needs an auth frame first' },
    });
    anonymous.send({ op: 'order.submit', params: {} });
    expect(
      await anonymous.next((f) => 'error' in f && (f.error as { code: number }).code === 3300),
    ).toBeDefined();
    anonymous.close();
    const socket = await OrderSocket.open(feed.wsUrl(), reader.apiKey, reader.secret);
    expect(
      (await socket.op('order.submit', { symbol: MARKET, type: 'limit', amount: 1, price: 1 })).error,
    ).toMatchObject({
      code: 2010,
      name: 'scope_missing',
    });
    const other = await feed.trader();
    const theirs = await other.http.v3('/v3/auth/w/order/submit', {
      symbol: MARKET,
      type: 'limit',
      amount: '0.001',
      price: '20000',
    });
    const id = (theirs.json() as number[])[0];
    // order.get needs read only; another account's order answers as a missing one.
    expect((await socket.op('order.get', { order_id: id })).error).toMatchObject({
      code: 2004,
      name: 'order_not_found',
    });
    expect((await socket.op('order.get', {})).error).toMatchObject({ code: 1001, name: 'validation_failed' });
    socket.close();
  });

  it('client_order_id: unique per account, asked for by order.get and POST /v3/auth/r/order/by-client-id, also after a dropped connection', async () => {
    const trader = await feed.trader();
    const socket = await OrderSocket.open(feed.wsUrl(), trader.apiKey, trader.secret);
    const body = {
      symbol: MARKET,
      type: 'limit',
      amount: '0.002',
      price: '31000',
      client_order_id: 'bot-1:a',
    };
    const first = await socket.op('order.submit', body);
    const order = first.result as (string | number)[];
    expect((await socket.op('order.get', { client_order_id: 'bot-1:a' })).result).toEqual(order);
    const rest = await trader.http.v3('/v3/auth/r/order/by-client-id', { client_order_id: 'bot-1:a' });
    expect(rest.statusCode).toBe(200);
    expect(rest.json()).toEqual(order);
    // A second use is refused, over either transport; another account may use the same id.
    expect((await socket.op('order.submit', body)).error).toMatchObject({
      code: 2030,
      name: 'client_order_id_used',
    });
    const again = await trader.http.v3('/v3/auth/w/order/submit', body);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error: { code: 2030, name: 'client_order_id_used' } });
    const other = await feed.trader();
    expect((await other.http.v3('/v3/auth/w/order/submit', body)).statusCode).toBe(200);
    // A refused order keeps its id used and says why when asked.
    const poor = { ...body, amount: '900', client_order_id: 'bot-1:b' };
    expect((await socket.op('order.submit', poor)).error).toMatchObject({ name: 'insufficient_funds' });
    expect((await socket.op('order.get', { client_order_id: 'bot-1:b' })).error).toMatchObject({
      code: 2004,
      message: expect.stringContaining('refused: INSUFFICIENT_FUNDS'),
    });
    expect((await socket.op('order.get', { client_order_id: 'never' })).error).toMatchObject({ code: 2004 });
    // The connection drops right after the order is sent: another connection learns its outcome.
    socket.feed.send({ op: 'order.submit', id: 99, params: { ...body, client_order_id: 'bot-1:c' } });
    socket.feed.socket.terminate();
    const later = await OrderSocket.open(feed.wsUrl(), trader.apiKey, trader.secret);
    let found: unknown;
    for (let i = 0; i < 100 && !found; i += 1) {
      const answer = await later.op('order.get', { client_order_id: 'bot-1:c' });
      found = answer.result;
      if (!found) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(found).toMatchObject({ 3: MARKET, 13: 'ACTIVE' });
    later.close();
  });

  it('the route’s request limits count the operations; at most maxPendingOperations answered at once', async () => {
    const trader = await feed.trader();
    const socket = await OrderSocket.open(feed.wsUrl(), trader.apiKey, trader.secret);
    // 40 at once (the pending bound): 41 more are refused with too_many_operations while they run.
    const sent = Array.from({ length: 81 }, () => socket.op('order.get', { client_order_id: 'none' }));
    const answers = await Promise.all(sent);
    const names = answers.map((a) => a.error?.name);
    expect(names.filter((n) => n === 'too_many_operations').length).toBeGreaterThan(0);
    expect(names.filter((n) => n === 'order_not_found').length).toBeGreaterThanOrEqual(40);
    // Over the key's 100 per second (HTTP requests of the key count too): rate_limited (1012).
    let limited: unknown;
    for (let i = 0; i < 20 && !limited; i += 1) {
      const burst = await Promise.all(
        Array.from({ length: 40 }, () => socket.op('order.get', { client_order_id: 'none' })),
      );
      limited = burst.find((a) => a.error?.name === 'rate_limited')?.error;
    }
    expect(limited).toMatchObject({ code: 1012, message: expect.stringContaining('rule key-second') });
    socket.close();
  });

  it('property: over random concurrent operations from several accounts, every acknowledged order exists once, every refused one does not, and the ledger balances', async () => {
    const traders = await Promise.all([feed.trader(), feed.trader(), feed.trader()]);
    const sockets = await Promise.all(traders.map((t) => OrderSocket.open(feed.wsUrl(), t.apiKey, t.secret)));
    const operation = fc.oneof(
      fc.record({
        kind: fc.constant('submit' as const),
        type: fc.constantFrom('limit', 'market', 'limit_stop_loss'),
        sell: fc.boolean(),
        amount: fc.integer({ min: 1, max: 400 }),
        tick: fc.integer({ min: -20, max: 20 }),
        broken: fc.constantFrom(false, false, false, 'decimals', 'market', 'missing'),
      }),
      fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
    );
    let run = 0;
    let totalAcked = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat({ max: 2 }), operation), { minLength: 20, maxLength: 60 }),
        async (plan) => {
          run += 1;
          const acked: { account: number; id: number; clientId: string }[] = [];
          const refused: { account: number; clientId: string }[] = [];
          const ids: number[][] = traders.map(() => []);
          await Promise.all(
            plan.map(async ([who, op], index) => {
              const socket = sockets[who]!;
              const account = traders[who]!.accountId;
              if (op.kind === 'cancel') {
                const mine = ids[who]!;
                if (mine.length === 0) return;
                const answer = await socket.op('order.cancel', { order_id: mine[op.pick % mine.length] });
                if (answer.error) expect(['cancel_failed', 'order_not_found']).toContain(answer.error.name);
                return;
              }
              const clientId = `p${run}-${index}`;
              const price = (37_000 + op.tick * 5).toFixed(2);
              const amount = (op.amount / 1000).toFixed(op.broken === 'decimals' ? 7 : 3);
              const answer = await socket.op('order.submit', {
                symbol: op.broken === 'market' ? 'nosuchmarket' : MARKET,
                type: op.type,
                amount: op.sell ? `-${amount}` : amount,
                ...(op.type === 'market' || op.broken === 'missing' ? {} : { price }),
                ...(op.type === 'limit_stop_loss' ? { stop_price: price } : {}),
                client_order_id: clientId,
              });
              if (answer.result) {
                const id = (answer.result as number[])[0]!;
                acked.push({ account, id, clientId });
                ids[who]!.push(id);
              } else {
                expect(answer.error!.code, JSON.stringify(answer)).toBeLessThan(3000);
                refused.push({ account, clientId });
              }
            }),
          );
          const { rows } = await target
            .db()
            .query<{ id: string; account_id: number; client_order_id: string }>(
              `SELECT o.id::text, o.account_id, c.client_order_id FROM orders o
             JOIN client_order_ids c ON c.order_id = o.id WHERE c.client_order_id LIKE $1`,
              [`p${run}-%`],
            );
          const stored = rows.map((r) => ({
            account: r.account_id,
            id: Number(r.id),
            clientId: r.client_order_id,
          }));
          const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;
          expect(stored.sort(byId)).toEqual([...acked].sort(byId));
          for (const { clientId } of refused) expect(stored.some((s) => s.clientId === clientId)).toBe(false);
          expect((await reconcile(target.db())).problems).toEqual([]);
          totalAcked += acked.length;
        },
      ),
      { numRuns: 6, seed: Number(process.env.TEST_SEED ?? 44) },
    );
    // And no order of these accounts besides the acknowledged ones (none placed twice).
    const { rows } = await target
      .db()
      .query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE account_id = ANY($1::int[])', [
        traders.map((t) => t.accountId),
      ]);
    expect(rows[0]!.n).toBe(totalAcked);
    for (const socket of sockets) socket.close();
  }, 120_000);
});
