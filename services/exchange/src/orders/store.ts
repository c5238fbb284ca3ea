import type { Sql } from '../db/database.js';
import type { Command } from '../matching/types.js';

/** An order as stored; amounts in the market's engine units (see markets.ts). */
export interface OrderRow {
  id: number;
  market: string;
  accountId: number;
  side: 'buy' | 'sell';
  kind: 'limit' | 'market' | 'market_by_quote' | 'limit_stop_loss';
  price: bigint | null;
  stopPrice: bigint | null;
  amount: bigint | null;
  quote: bigint | null;
  executed: bigint;
  funds: bigint;
  tradesCount: number;
  state: 'wait' | 'done' | 'cancel';
  createdAt: number;
  updatedAt: number;
}

export interface TradeRow {
  id: number;
  market: string;
  price: bigint;
  amount: bigint;
  quote: bigint;
  takerSide: 'buy' | 'sell';
  buyOrderId: number;
  sellOrderId: number;
  buyAccount: number;
  sellAccount: number;
  buyerFee: bigint;
  sellerFee: bigint;
  createdAt: number;
}

/** Changes a batch made to an order that existed before it. */
export interface OrderDelta {
  id: number;
  executed: bigint;
  funds: bigint;
  trades: number;
  state: OrderRow['state'] | null;
  updatedAt: number;
}

function orderColumns(p = ''): string {
  return `${p}id, ${p}market, ${p}account_id, ${p}side, ${p}kind, ${p}price::text AS price,
    ${p}stop_price::text AS stop_price, ${p}amount::text AS amount, ${p}quote::text AS quote,
    ${p}executed::text AS executed, ${p}funds::text AS funds, ${p}trades_count, ${p}state,
    ${p}created_at::text AS created_at, ${p}updated_at::text AS updated_at`;
}
const ORDER_COLUMNS = orderColumns();

interface OrderRecord {
  id: string;
  market: string;
  account_id: number;
  side: OrderRow['side'];
  kind: OrderRow['kind'];
  price: string | null;
  stop_price: string | null;
  amount: string | null;
  quote: string | null;
  executed: string;
  funds: string;
  trades_count: number;
  state: OrderRow['state'];
  created_at: string;
  updated_at: string;
}

const big = (value: string | null): bigint | null => (value === null ? null : BigInt(value));
const text = (value: bigint | null): string | null => (value === null ? null : value.toString());

function orderOf(row: OrderRecord): OrderRow {
  return {
    id: Number(row.id),
    market: row.market,
    accountId: row.account_id,
    side: row.side,
    kind: row.kind,
    price: big(row.price),
    stopPrice: big(row.stop_price),
    amount: big(row.amount),
    quote: big(row.quote),
    executed: BigInt(row.executed),
    funds: BigInt(row.funds),
    tradesCount: row.trades_count,
    state: row.state,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** Command log entries are JSON with bigints as decimal strings. */
const BIGINT_FIELDS = ['price', 'stopPrice', 'amount', 'budget', 'quote'] as const;

export function encodeCommand(command: Command): string {
  return JSON.stringify(command, (_key, value) => (typeof value === 'bigint' ? value.toString() : value));
}

export function decodeCommand(json: Record<string, unknown>): Command {
  const command: Record<string, unknown> = { ...json };
  for (const field of BIGINT_FIELDS) {
    if (typeof command[field] === 'string') command[field] = BigInt(command[field] as string);
  }
  return command as unknown as Command;
}

/**
 * Writes what one batch did in one statement: the command log, new orders, changes of older orders
 * (returned, as they are now) and trades.
 */
export async function writeBatch(
  tx: Sql,
  market: string,
  commands: { seq: number; command: Command }[],
  created: OrderRow[],
  changed: OrderDelta[],
  trades: TradeRow[],
  nonces: ReadonlyMap<number, { v2: bigint; v3: bigint }> = new Map(),
): Promise<OrderRow[]> {
  const { rows } = await tx.query<OrderRecord>(
    `WITH c AS (
       INSERT INTO engine_commands (market, seq, command)
       SELECT $1, s, c::jsonb FROM unnest($2::bigint[], $3::text[]) AS v(s, c)
     ), o AS (
       INSERT INTO orders (id, market, account_id, side, kind, price, stop_price, amount, quote, executed,
                           funds, trades_count, state, created_at, updated_at)
       SELECT * FROM unnest($4::bigint[], $5::text[], $6::int[], $7::text[], $8::text[], $9::numeric[],
                            $10::numeric[], $11::numeric[], $12::numeric[], $13::numeric[], $14::numeric[],
                            $15::int[], $16::text[], $17::bigint[], $18::bigint[])
     ), t AS (
       INSERT INTO trades (id, market, price, amount, quote, taker_side, buy_order_id, sell_order_id,
                           buy_account, sell_account, buyer_fee, seller_fee, created_at)
       SELECT * FROM unnest($19::bigint[], $20::text[], $21::numeric[], $22::numeric[], $23::numeric[],
                            $24::text[], $25::bigint[], $26::bigint[], $27::int[], $28::int[], $29::numeric[],
                            $30::numeric[], $31::bigint[])
     ), u AS (
       UPDATE orders o SET executed = o.executed + d.executed, funds = o.funds + d.funds,
              trades_count = o.trades_count + d.trades, state = coalesce(d.state, o.state),
              updated_at = d.updated_at
         FROM unnest($32::bigint[], $33::numeric[], $34::numeric[], $35::int[], $36::text[], $37::bigint[])
              AS d(id, executed, funds, trades, state, updated_at)
        WHERE o.id = d.id
       RETURNING ${orderColumns('o.')}
     ), k AS (
       UPDATE api_keys k SET last_nonce_v2 = greatest(k.last_nonce_v2, v.v2),
              last_nonce_v3 = greatest(k.last_nonce_v3, v.v3), last_used_at = now()
         FROM unnest($38::int[], $39::bigint[], $40::bigint[]) AS v(id, v2, v3)
        WHERE k.id = v.id
     )
     SELECT * FROM u`,
    [
      market,
      commands.map((c) => c.seq),
      commands.map((c) => encodeCommand(c.command)),
      created.map((o) => o.id),
      created.map((o) => o.market),
      created.map((o) => o.accountId),
      created.map((o) => o.side),
      created.map((o) => o.kind),
      created.map((o) => text(o.price)),
      created.map((o) => text(o.stopPrice)),
      created.map((o) => text(o.amount)),
      created.map((o) => text(o.quote)),
      created.map((o) => o.executed.toString()),
      created.map((o) => o.funds.toString()),
      created.map((o) => o.tradesCount),
      created.map((o) => o.state),
      created.map((o) => o.createdAt),
      created.map((o) => o.updatedAt),
      trades.map((t) => t.id),
      trades.map((t) => t.market),
      trades.map((t) => t.price.toString()),
      trades.map((t) => t.amount.toString()),
      trades.map((t) => t.quote.toString()),
      trades.map((t) => t.takerSide),
      trades.map((t) => t.buyOrderId),
      trades.map((t) => t.sellOrderId),
      trades.map((t) => t.buyAccount),
      trades.map((t) => t.sellAccount),
      trades.map((t) => t.buyerFee.toString()),
      trades.map((t) => t.sellerFee.toString()),
      trades.map((t) => t.createdAt),
      changed.map((d) => d.id),
      changed.map((d) => d.executed.toString()),
      changed.map((d) => d.funds.toString()),
      changed.map((d) => d.trades),
      changed.map((d) => d.state),
      changed.map((d) => d.updatedAt),
      [...nonces.keys()],
      [...nonces.values()].map((n) => n.v2.toString()),
      [...nonces.values()].map((n) => n.v3.toString()),
    ],
  );
  return rows.map(orderOf);
}

/**
 * Locks, in one statement, the balances a batch draws on (in account, currency order) and the API
 * keys whose nonces it records; returns available funds by `account:currency` and last nonces by key.
 */
export async function lockBatch(
  tx: Sql,
  balances: readonly { accountId: number; currency: string }[],
  keyIds: readonly number[],
): Promise<{ available: Map<string, bigint>; nonces: Map<number, { v2: bigint; v3: bigint }> }> {
  const available = new Map<string, bigint>();
  const nonces = new Map<number, { v2: bigint; v3: bigint }>();
  if (balances.length === 0 && keyIds.length === 0) return { available, nonces };
  const { rows } = await tx.query<{
    kind: 'b' | 'n';
    id: number;
    currency: string | null;
    a: string;
    b: string | null;
  }>(
    `WITH b AS (
       SELECT b.account_id, b.currency, b.available::text AS available FROM balances b
         JOIN unnest($1::int[], $2::text[]) AS k(account_id, currency)
           ON b.account_id = k.account_id AND b.currency = k.currency
        ORDER BY b.account_id, b.currency FOR UPDATE OF b
     ), n AS (
       SELECT id, last_nonce_v2::text AS v2, last_nonce_v3::text AS v3 FROM api_keys
        WHERE id = ANY($3::int[]) ORDER BY id FOR UPDATE
     )
     SELECT 'b' AS kind, account_id AS id, currency, available AS a, NULL::text AS b FROM b
     UNION ALL SELECT 'n', id, NULL, v2, v3 FROM n`,
    [balances.map((k) => k.accountId), balances.map((k) => k.currency), keyIds],
  );
  for (const row of rows) {
    if (row.kind === 'b') available.set(`${row.id}:${row.currency}`, BigInt(row.a));
    else nonces.set(Number(row.id), { v2: BigInt(row.a), v3: BigInt(row.b ?? '0') });
  }
  return { available, nonces };
}

export async function ordersById(db: Sql, ids: readonly number[]): Promise<OrderRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<OrderRecord>(
    `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = ANY($1::bigint[])`,
    [ids],
  );
  return rows.map(orderOf);
}

export async function orderById(db: Sql, id: number): Promise<OrderRow | undefined> {
  return (await ordersById(db, [id]))[0];
}

export interface OrderQuery {
  accountId: number;
  market?: string;
  states: OrderRow['state'][];
  /** updated_at window (ms), inclusive. */
  from?: number;
  to?: number;
  limit: number;
  ascending: boolean;
  /** Sort by `updated_at` (history) or `id` (open orders). */
  by: 'id' | 'updated_at';
}

export async function listOrders(db: Sql, q: OrderQuery): Promise<OrderRow[]> {
  const { rows } = await db.query<OrderRecord>(
    `SELECT ${ORDER_COLUMNS} FROM orders
      WHERE account_id = $1 AND state = ANY($2::text[]) AND ($3::text IS NULL OR market = $3)
        AND ($4::bigint IS NULL OR updated_at >= $4) AND ($5::bigint IS NULL OR updated_at <= $5)
      ORDER BY ${q.by} ${q.ascending ? 'ASC' : 'DESC'}, id ${q.ascending ? 'ASC' : 'DESC'} LIMIT $6`,
    [q.accountId, q.states, q.market ?? null, q.from ?? null, q.to ?? null, q.limit],
  );
  return rows.map(orderOf);
}

interface TradeRecord {
  id: string;
  market: string;
  price: string;
  amount: string;
  quote: string;
  taker_side: 'buy' | 'sell';
  buy_order_id: string;
  sell_order_id: string;
  buy_account: number;
  sell_account: number;
  buyer_fee: string;
  seller_fee: string;
  created_at: string;
}

const TRADE_COLUMNS = `id, market, price::text, amount::text, quote::text, taker_side, buy_order_id,
  sell_order_id, buy_account, sell_account, buyer_fee::text, seller_fee::text, created_at`;

function tradeOf(row: TradeRecord): TradeRow {
  return {
    id: Number(row.id),
    market: row.market,
    price: BigInt(row.price),
    amount: BigInt(row.amount),
    quote: BigInt(row.quote),
    takerSide: row.taker_side,
    buyOrderId: Number(row.buy_order_id),
    sellOrderId: Number(row.sell_order_id),
    buyAccount: row.buy_account,
    sellAccount: row.sell_account,
    buyerFee: BigInt(row.buyer_fee),
    sellerFee: BigInt(row.seller_fee),
    createdAt: Number(row.created_at),
  };
}

export async function tradesOfOrder(db: Sql, orderId: number): Promise<TradeRow[]> {
  const { rows } = await db.query<TradeRecord>(
    `SELECT ${TRADE_COLUMNS} FROM trades WHERE buy_order_id = $1 OR sell_order_id = $1 ORDER BY id`,
    [orderId],
  );
  return rows.map(tradeOf);
}

export async function tradesOfAccount(
  db: Sql,
  accountId: number,
  market: string,
  limit: number,
): Promise<TradeRow[]> {
  const { rows } = await db.query<TradeRecord>(
    `SELECT ${TRADE_COLUMNS} FROM trades WHERE (buy_account = $1 OR sell_account = $1) AND market = $2
      ORDER BY id DESC LIMIT $3`,
    [accountId, market, limit],
  );
  return rows.map(tradeOf);
}

export async function marketTrades(db: Sql, market: string, limit: number): Promise<TradeRow[]> {
  const { rows } = await db.query<TradeRecord>(
    `SELECT ${TRADE_COLUMNS} FROM trades WHERE market = $1 ORDER BY id DESC LIMIT $2`,
    [market, limit],
  );
  return rows.map(tradeOf);
}

export interface DayStats {
  market: string;
  open: bigint;
  last: bigint;
  high: bigint;
  low: bigint;
  volume: bigint;
  /** Quote total traded (engine units). */
  funds: bigint;
}

/** Trades of the last 24 hours per market: first and last price, high, low, base volume. */
export async function dayStats(db: Sql, since: number): Promise<Map<string, DayStats>> {
  const { rows } = await db.query<{
    market: string;
    open: string;
    last: string;
    high: string;
    low: string;
    volume: string;
    funds: string;
  }>(
    `SELECT market, (array_agg(price ORDER BY id))[1]::text AS open,
            (array_agg(price ORDER BY id DESC))[1]::text AS last,
            max(price)::text AS high, min(price)::text AS low, sum(amount)::text AS volume,
            sum(quote)::text AS funds
       FROM trades WHERE created_at >= $1 GROUP BY market`,
    [since],
  );
  return new Map(
    rows.map((r) => [
      r.market,
      {
        market: r.market,
        open: BigInt(r.open),
        last: BigInt(r.last),
        high: BigInt(r.high),
        low: BigInt(r.low),
        volume: BigInt(r.volume),
        funds: BigInt(r.funds),
      },
    ]),
  );
}

/** Largest order and trade ids used so far (ids are assigned by the order service). */
export async function lastIds(db: Sql): Promise<{ order: number; trade: number }> {
  const { rows } = await db.query<{ o: string; t: string }>(
    'SELECT (SELECT coalesce(max(id), 0) FROM orders)::text AS o, (SELECT coalesce(max(id), 0) FROM trades)::text AS t',
  );
  return { order: Number(rows[0]?.o ?? 0), trade: Number(rows[0]?.t ?? 0) };
}

/** The command log of one market after `afterSeq`, in order, at most `limit` entries. */
export async function commandLog(
  db: Sql,
  market: string,
  afterSeq: number,
  limit: number,
): Promise<{ seq: number; command: Command }[]> {
  const { rows } = await db.query<{ seq: string; command: Record<string, unknown> | string }>(
    'SELECT seq, command FROM engine_commands WHERE market = $1 AND seq > $2 ORDER BY seq LIMIT $3',
    [market, afterSeq, limit],
  );
  return rows.map((row) => ({
    seq: Number(row.seq),
    command: decodeCommand(typeof row.command === 'string' ? JSON.parse(row.command) : row.command),
  }));
}
