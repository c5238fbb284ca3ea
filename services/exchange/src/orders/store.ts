import type { Sql } from '../db/database.js';
import type { JournalEntry } from '../ledger/entry.js';
import { postingApplied, postingCtes, postingParameters } from '../ledger/store.js';
import type { Command, DoneReason, StpMode } from '../matching/types.js';

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
  /**
   * Why self-trade prevention, FOK or IOC ended (or, `decrement`, reduced) the order:
   * `self_trade_prevented`, `fok_not_filled`, `ioc_rest_cancelled`; null (absent) for every other order.
   */
  reason?: OrderReason | null;
  /** The taker's self-trade prevention mode when `reason` is `self_trade_prevented`, else null. */
  stp?: StpMode | null;
}

/** The done reasons an order keeps (087_self_trade_reason.sql). */
export type OrderReason = Extract<
  DoneReason,
  'self_trade_prevented' | 'fok_not_filled' | 'ioc_rest_cancelled'
>;

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
  /** Both orders are one account's (the taker's stp was `none`). */
  selfTrade?: boolean;
}

/** Changes a batch made to an order that existed before it. */
export interface OrderDelta {
  id: number;
  executed: bigint;
  funds: bigint;
  trades: number;
  state: OrderRow['state'] | null;
  updatedAt: number;
  /** Set by an amend: the new limit price and total amount (null/absent: unchanged). */
  price?: bigint | null;
  amount?: bigint | null;
  /** Set when self-trade prevention, FOK or IOC ended or reduced the order (null/absent: unchanged). */
  reason?: OrderReason | null;
  stp?: StpMode | null;
}

function orderColumns(p = ''): string {
  return `${p}id, ${p}market, ${p}account_id, ${p}side, ${p}kind, ${p}price::text AS price,
    ${p}stop_price::text AS stop_price, ${p}amount::text AS amount, ${p}quote::text AS quote,
    ${p}executed::text AS executed, ${p}funds::text AS funds, ${p}trades_count, ${p}state,
    ${p}created_at::text AS created_at, ${p}updated_at::text AS updated_at, ${p}reason, ${p}stp`;
}
const ORDER_COLUMNS = orderColumns();

/** An order row as the statements return it (numbers as text), and as a cluster's feed log holds it. */
export interface OrderRecord {
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
  /** Absent in feed logs written before 087_self_trade_reason.sql. */
  reason?: OrderReason | null;
  stp?: StpMode | null;
}

const big = (value: string | null): bigint | null => (value === null ? null : BigInt(value));
const text = (value: bigint | null): string | null => (value === null ? null : value.toString());

export function orderOf(row: OrderRecord): OrderRow {
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
    reason: row.reason ?? null,
    stp: row.stp ?? null,
  };
}

/** Command log entries are JSON with bigints as decimal strings. */
const BIGINT_FIELDS = ['price', 'stopPrice', 'amount', 'budget', 'quote'] as const;

const bigintAsText = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);

/** A batch's commands as one log row: a JSON array, in order. */
export function encodeCommands(commands: readonly Command[]): string {
  return JSON.stringify(commands, bigintAsText);
}

export function decodeCommand(json: Record<string, unknown>): Command {
  const command: Record<string, unknown> = { ...json };
  for (const field of BIGINT_FIELDS) {
    if (typeof command[field] === 'string') command[field] = BigInt(command[field] as string);
  }
  return command as unknown as Command;
}

/** Nonce value meaning "this batch used no nonce of this protocol with the key" in `NonceUse`. */
export const NO_NONCE = 2n ** 62n;

/** The nonces a batch accepted with one API key: the largest (to record) and smallest of each protocol. */
export interface NonceUse {
  v2: bigint;
  v3: bigint;
  minV2: bigint;
  minV3: bigint;
}

/** What one batch did, to be written by `writeBatch`. */
export interface BatchEffects {
  readonly market: string;
  /** The batch's commands, in order; `lastSeq` is the sequence number of the last. */
  readonly commands: readonly Command[];
  readonly lastSeq: number;
  /** The batch's ledger movements netted into one entry (none when they cancel out). */
  readonly entry: JournalEntry | undefined;
  readonly created: readonly OrderRow[];
  readonly changed: readonly OrderDelta[];
  readonly trades: readonly TradeRow[];
  readonly nonces: ReadonlyMap<number, NonceUse>;
  /** Orders placed under a client order id (client-order-ids.ts): the reservations get their order. */
  readonly clientOrders?: readonly (readonly [accountId: number, clientOrderId: string, orderId: number])[];
  /** The API key of each created order, by order id (orders.api_key_id, src/cancel-all/). */
  readonly orderKeys?: ReadonlyMap<number, number>;
  /** The batch chain (007_batch_chain.sql): the value the batch before left, and the one this one leaves. */
  readonly chain: { readonly prev: number; readonly next: number };
  /**
   * In a cluster (src/cluster/): the node's own chain row (node_chains) replaces the single one, and
   * the statement commits only while the node holds the market's lease at `epoch` (refused with
   * SQLSTATE SVC02 otherwise), recording the batch's last sequence number and ids in the lease row.
   */
  readonly fence?: BatchFence;
}

/** What fences one batch of a cluster node (030_cluster.sql). */
export interface BatchFence {
  readonly node: string;
  readonly epoch: number;
  /** The largest order and trade ids the batch used (or the market's last ones). */
  readonly lastOrderId: number;
  readonly lastTradeId: number;
}

/** What the database holds after a batch: the older orders it changed, and the balances it moved. */
export interface BatchWritten {
  readonly orders: OrderRow[];
  /** Available funds by `account:currency` of every balance the batch's ledger entry changed. */
  readonly balances: Map<string, bigint>;
}

/**
 * Writes a whole batch in one statement, which commits on its own (one round trip, one fsync): its
 * ledger entry (see `postingCtes`), one command log row holding all its commands, new orders,
 * changes of older orders, trades, and the last nonces of the API keys it used. The batch was
 * computed from balances and nonces read without locks, so the statement checks that they still
 * hold: every balance guard passes, no key's stored nonce has reached the smallest nonce the batch
 * accepted from it (nor was the key disabled or revoked), and the batch chain holds the value the
 * batch before this one left (that batch committed). Otherwise the statement refuses
 * itself (SQLSTATE SVC01) and nothing of the batch is written; the writer then recomputes it on
 * fresh values.
 */
const SINGLE_LOG = `c AS (
       INSERT INTO engine_commands (market, seq, command)
       SELECT $13::text, $14::bigint, $15::jsonb WHERE $14::bigint > 0
     ), `;
// A cluster node logs what the batch changed beside its commands (065_feed_log.sql): its trades and
// created orders (built here from the statement's own parameters, in the owner's order; the orders
// in the shape of the changed ones, `orderColumns`), the older orders it changed and the balances it
// moved as the statement left them, so that the nodes following the market publish what the owner
// publishes (batch-feed.ts). Only while a node follows the market (066_feed_wanted.sql): the flag
// comes from the fence's UPDATE, which sees the newest row (a flag committed while it waited for the
// row's lock included); otherwise none of it is built.
const clusterLog = (stAt: number) => `c AS (
       INSERT INTO engine_commands (market, seq, command, feed)
       SELECT $13::text, $14::bigint, $15::jsonb,
              CASE WHEN (SELECT feed_wanted FROM f) THEN jsonb_build_object(
                'trades', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                    'id', x.id, 'market', x.market, 'price', x.price::text, 'amount', x.amount::text,
                    'quote', x.quote::text, 'takerSide', x.taker_side, 'buyOrderId', x.buy_order_id,
                    'sellOrderId', x.sell_order_id, 'buyAccount', x.buy_account, 'sellAccount', x.sell_account,
                    'buyerFee', x.buyer_fee::text, 'sellerFee', x.seller_fee::text, 'createdAt', x.created_at,
                    'selfTrade', x.self_trade)
                    ORDER BY x.n), '[]'::jsonb)
                  FROM unnest($31::bigint[], $32::text[], $33::numeric[], $34::numeric[], $35::numeric[],
                              $36::text[], $37::bigint[], $38::bigint[], $39::int[], $40::int[], $41::numeric[],
                              $42::numeric[], $43::bigint[], $${stAt}::boolean[])
                       WITH ORDINALITY AS x(id, market, price, amount, quote, taker_side, buy_order_id,
                                            sell_order_id, buy_account, sell_account, buyer_fee, seller_fee,
                                            created_at, self_trade, n)),
                'created', (SELECT coalesce(jsonb_agg(to_jsonb(r) - 'n' ORDER BY r.n), '[]'::jsonb)
                  FROM (SELECT ${orderColumns('y.')}, y.n
                          FROM unnest($16::bigint[], $17::text[], $18::int[], $19::text[], $20::text[],
                                      $21::numeric[], $22::numeric[], $23::numeric[], $24::numeric[],
                                      $25::numeric[], $26::numeric[], $27::int[], $28::text[], $29::bigint[],
                                      $30::bigint[], $${stAt + 1}::text[], $${stAt + 2}::text[])
                               WITH ORDINALITY AS y(id, market, account_id, side, kind, price, stop_price,
                                                    amount, quote, executed, funds, trades_count, state,
                                                    created_at, updated_at, reason, stp, n)) r),
                'changed', coalesce((SELECT jsonb_agg(to_jsonb(u)) FROM u), '[]'::jsonb),
                'balances', coalesce((SELECT jsonb_agg(jsonb_build_object('account_id', account_id,
                  'currency', currency, 'available', available::text)) FROM b), '[]'::jsonb)) END
        WHERE $14::bigint > 0
     )`;
const SINGLE_CHAIN = `h AS (
       UPDATE batch_chain SET seq = $57 WHERE id = 1 AND seq = $56 RETURNING 1
     )`;
// A cluster node's chain row, and the lease fence: checked under the row's lock, so a takeover (which
// bumps the epoch) waits for a batch in progress, and a batch after the takeover finds the new epoch.
const CLUSTER_CHAIN = `h AS (
       UPDATE node_chains SET seq = $57 WHERE node_id = $58 AND seq = $56 RETURNING 1
     ), f AS (
       UPDATE market_leases
          SET seq = greatest(seq, $14::bigint), last_order_id = greatest(last_order_id, $60::bigint),
              last_trade_id = greatest(last_trade_id, $61::bigint)
        WHERE market = $13::text AND owner = $58::text AND epoch = $59::bigint AND expires_at > clock_timestamp()
       RETURNING feed_wanted_until > clock_timestamp() AS feed_wanted
     )`;
const CLUSTER_FENCE = 'WHEN NOT EXISTS (SELECT 1 FROM f) THEN to_json(cluster_fenced($13::text)) ';

/** The reservations of the batch's client order ids get their orders (parameters from `$first`). */
const clientOrdersCte = (first: number) => `, x AS (
       UPDATE client_order_ids c SET order_id = v.order_id
         FROM unnest($${first}::int[], $${first + 1}::text[], $${first + 2}::bigint[]) AS v(account_id, client_order_id, order_id)
        WHERE c.account_id = v.account_id AND c.client_order_id = v.client_order_id
     )`;

export async function writeBatch(db: Sql, batch: BatchEffects): Promise<BatchWritten> {
  // Keys in id order, so that concurrent statements lock them in one order.
  const nonces = [...batch.nonces.entries()].sort(([a], [b]) => a - b);
  const clientOrders = batch.clientOrders ?? [];
  // After the fence's parameters: the created orders' API keys, then the client order ids, then
  // the amend arrays (their numbers depend on the optional ones).
  const keysAt = batch.fence ? 62 : 58;
  const amendAt = keysAt + 1 + (clientOrders.length > 0 ? 3 : 0);
  // After the amend arrays: the trades' self-trade flags, the created orders' reasons and modes, the
  // changed orders' reasons and modes (087_self_trade_reason.sql).
  const stAt = amendAt + 2;
  const { rows } = await db.query<{
    result: { orders: OrderRecord[] | null; balances: BalanceRecord[] | null };
  }>(
    `WITH ${postingCtes(1)}, ${batch.fence ? '' : SINGLE_LOG}o AS (
       INSERT INTO orders (id, market, account_id, side, kind, price, stop_price, amount, quote, executed,
                           funds, trades_count, state, created_at, updated_at, api_key_id, reason, stp)
       SELECT * FROM unnest($16::bigint[], $17::text[], $18::int[], $19::text[], $20::text[], $21::numeric[],
                            $22::numeric[], $23::numeric[], $24::numeric[], $25::numeric[], $26::numeric[],
                            $27::int[], $28::text[], $29::bigint[], $30::bigint[], $${keysAt}::int[],
                            $${stAt + 1}::text[], $${stAt + 2}::text[])
     ), t AS (
       INSERT INTO trades (id, market, price, amount, quote, taker_side, buy_order_id, sell_order_id,
                           buy_account, sell_account, buyer_fee, seller_fee, created_at, self_trade)
       SELECT * FROM unnest($31::bigint[], $32::text[], $33::numeric[], $34::numeric[], $35::numeric[],
                            $36::text[], $37::bigint[], $38::bigint[], $39::int[], $40::int[], $41::numeric[],
                            $42::numeric[], $43::bigint[], $${stAt}::boolean[])
     ), u AS (
       SELECT ${orderColumns('o.')}
         FROM orders_apply_changes($44::bigint[], $45::numeric[], $46::numeric[], $47::int[], $48::text[],
                                   $49::bigint[], $${amendAt}::numeric[], $${amendAt + 1}::numeric[],
                                   $${stAt + 3}::text[], $${stAt + 4}::text[]) AS o
     ), k AS (
       SELECT * FROM api_keys_record_nonces($50::int[], $51::bigint[], $52::bigint[], $53::bigint[],
                                            $54::bigint[])
     ), ${batch.fence ? `${CLUSTER_CHAIN}, ${clusterLog(stAt)}` : SINGLE_CHAIN}${clientOrders.length > 0 ? clientOrdersCte(keysAt + 1) : ''}
     SELECT CASE ${batch.fence ? CLUSTER_FENCE : ''}WHEN ${postingApplied(1)} AND (SELECT count(*) FROM k) = $55 AND EXISTS (SELECT 1 FROM h)
       THEN json_build_object(
         'orders', (SELECT json_agg(u) FROM u),
         'balances', (SELECT json_agg(json_build_object('account_id', account_id, 'currency', currency,
                                                        'available', available::text)) FROM b))
       ELSE to_json(ledger_refuse('the balances, nonces or earlier batch this batch was computed on have changed'))
     END AS result`,
    [
      ...postingParameters(batch.entry),
      batch.market,
      batch.commands.length > 0 ? batch.lastSeq : 0,
      encodeCommands(batch.commands),
      ...orderColumnsOf(batch.created),
      ...tradeColumnsOf(batch.trades),
      batch.changed.map((d) => d.id),
      batch.changed.map((d) => d.executed.toString()),
      batch.changed.map((d) => d.funds.toString()),
      batch.changed.map((d) => d.trades),
      batch.changed.map((d) => d.state),
      batch.changed.map((d) => d.updatedAt),
      nonces.map(([id]) => id),
      nonces.map(([, n]) => n.v2.toString()),
      nonces.map(([, n]) => n.v3.toString()),
      nonces.map(([, n]) => n.minV2.toString()),
      nonces.map(([, n]) => n.minV3.toString()),
      nonces.length,
      batch.chain.prev,
      batch.chain.next,
      ...(batch.fence
        ? [batch.fence.node, batch.fence.epoch, batch.fence.lastOrderId, batch.fence.lastTradeId]
        : []),
      batch.created.map((o) => batch.orderKeys?.get(o.id) ?? null),
      ...(clientOrders.length > 0
        ? [clientOrders.map((c) => c[0]), clientOrders.map((c) => c[1]), clientOrders.map((c) => c[2])]
        : []),
      // Last, so the numbers of the others stay put: amended prices and total amounts (085_order_amend.sql).
      batch.changed.map((d) => text(d.price ?? null)),
      batch.changed.map((d) => text(d.amount ?? null)),
      // After them (087_self_trade_reason.sql): self-trade flags, created and changed orders' reasons and modes.
      batch.trades.map((t) => t.selfTrade === true),
      batch.created.map((o) => o.reason ?? null),
      batch.created.map((o) => o.stp ?? null),
      batch.changed.map((d) => d.reason ?? null),
      batch.changed.map((d) => d.stp ?? null),
    ],
  );
  const result = rows[0]!.result;
  return {
    orders: (result.orders ?? []).map(orderOf),
    balances: new Map(
      (result.balances ?? []).map((row) => [`${row.account_id}:${row.currency}`, BigInt(row.available)]),
    ),
  };
}

export interface BalanceRecord {
  account_id: number;
  currency: string;
  available: string;
}

function orderColumnsOf(created: readonly OrderRow[]): unknown[] {
  return [
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
  ];
}

function tradeColumnsOf(trades: readonly TradeRow[]): unknown[] {
  return [
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
  ];
}

/** An API key's last nonces and whether it may still be used, as a batch read them. */
export interface KeyNonces {
  readonly v2: bigint;
  readonly v3: bigint;
  readonly status: 'usable' | 'disabled' | 'revoked';
}

/**
 * Reads, in one statement and without locks, the available funds of balances a batch draws on and
 * the last nonces of API keys it records: `writeBatch` checks in its own statement that they still
 * hold. Missing balances and keys are absent from the maps.
 */
/** The value the last committed batch left in the batch chain (007_batch_chain.sql). */
export async function chainHead(db: Sql, node?: string): Promise<number> {
  if (node !== undefined) {
    const { rows } = await db.query<{ seq: string }>(
      `INSERT INTO node_chains (node_id) VALUES ($1) ON CONFLICT (node_id) DO UPDATE SET seq = node_chains.seq
       RETURNING seq::text`,
      [node],
    );
    return Number(rows[0]?.seq ?? 0);
  }
  const { rows } = await db.query<{ seq: number }>('SELECT seq FROM batch_chain WHERE id = 1');
  return rows[0]?.seq ?? 0;
}

export async function readBatch(
  db: Sql,
  balances: readonly { accountId: number; currency: string }[],
  keyIds: readonly number[],
): Promise<{ available: Map<string, bigint>; nonces: Map<number, KeyNonces> }> {
  const available = new Map<string, bigint>();
  const nonces = new Map<number, KeyNonces>();
  if (balances.length === 0 && keyIds.length === 0) return { available, nonces };
  const { rows } = await db.query<{
    kind: 'b' | 'n';
    id: number;
    currency: string | null;
    a: string | null;
    b: string | null;
    status: KeyNonces['status'] | null;
  }>(
    // One primary-key lookup per balance or key, whatever the tables' sizes (see 005_keyed_batch_updates.sql).
    `SELECT 'b' AS kind, k.account_id AS id, k.currency,
            (SELECT available::text FROM balances b
              WHERE b.account_id = k.account_id AND b.currency = k.currency) AS a,
            NULL::text AS b, NULL AS status
       FROM unnest($1::int[], $2::text[]) AS k(account_id, currency)
     UNION ALL
     SELECT 'n', id, NULL, last_nonce_v2::text, last_nonce_v3::text,
            CASE WHEN revoked_at IS NOT NULL THEN 'revoked' WHEN NOT enabled THEN 'disabled' ELSE 'usable' END
       FROM unnest($3::int[]) AS wanted(id), LATERAL (
         -- LIMIT keeps the subquery from being flattened into a join: it stays a lookup per key.
         SELECT last_nonce_v2, last_nonce_v3, revoked_at, enabled FROM api_keys WHERE api_keys.id = wanted.id LIMIT 1
       ) key`,
    [balances.map((k) => k.accountId), balances.map((k) => k.currency), keyIds],
  );
  for (const row of rows) {
    if (row.kind === 'b') {
      if (row.a !== null) available.set(`${row.id}:${row.currency}`, BigInt(row.a));
    } else {
      nonces.set(Number(row.id), {
        v2: BigInt(row.a ?? '0'),
        v3: BigInt(row.b ?? '0'),
        status: row.status ?? 'usable',
      });
    }
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
  /** Rows to skip first (v2 `page`). @default 0 */
  offset?: number;
  /** Only orders with a smaller id (keyset paging of lists sorted by id, newest first). */
  beforeId?: number;
  ascending: boolean;
  /** Sort by `updated_at` (history) or `id` (open orders). */
  by: 'id' | 'updated_at';
  /** Only orders that executed, wholly or in part (the v3 executed list). @default false */
  executedOnly?: boolean;
}

export async function listOrders(db: Sql, q: OrderQuery): Promise<OrderRow[]> {
  const { rows } = await db.query<OrderRecord>(
    `SELECT ${ORDER_COLUMNS} FROM orders
      WHERE account_id = $1 AND state = ANY($2::text[]) AND ($3::text IS NULL OR market = $3)
        AND ($4::bigint IS NULL OR updated_at >= $4) AND ($5::bigint IS NULL OR updated_at <= $5)
        AND ($7::bigint IS NULL OR id < $7) AND (NOT $9::boolean OR executed > 0)
      ORDER BY ${q.by} ${q.ascending ? 'ASC' : 'DESC'}, id ${q.ascending ? 'ASC' : 'DESC'} LIMIT $6 OFFSET $8`,
    [
      q.accountId,
      q.states,
      q.market ?? null,
      q.from ?? null,
      q.to ?? null,
      q.limit,
      q.beforeId ?? null,
      q.offset ?? 0,
      q.executedOnly ?? false,
    ],
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
  self_trade: boolean;
}

const TRADE_COLUMNS = `id, market, price::text, amount::text, quote::text, taker_side, buy_order_id,
  sell_order_id, buy_account, sell_account, buyer_fee::text, seller_fee::text, created_at, self_trade`;

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
    selfTrade: row.self_trade,
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

/**
 * The sequence numbers of `batches` the log holds as they were sent: a row under the batch's last
 * sequence number with the same commands (compared as JSON values). In a cluster another owner may
 * have logged other commands under the same numbers after it took the market over.
 */
export async function loggedAsSent(
  db: Sql,
  market: string,
  batches: readonly { seq: number; commands: readonly Command[] }[],
): Promise<Set<number>> {
  if (batches.length === 0) return new Set();
  const { rows } = await db.query<{ seq: string }>(
    `SELECT e.seq::text FROM unnest($2::bigint[], $3::jsonb[]) AS w(seq, command)
       JOIN engine_commands e ON e.market = $1 AND e.seq = w.seq AND e.command = w.command`,
    [market, batches.map((b) => b.seq), batches.map((b) => encodeCommands(b.commands))],
  );
  return new Set(rows.map((row) => Number(row.seq)));
}

/**
 * The command log of one market after `afterSeq`, in order, from at most `limit` rows. A row holds
 * one batch's commands as a JSON array under the sequence number of its last command (rows written
 * before batches were logged whole hold a single command object); a batch is never split by `afterSeq`
 * since callers continue from the last sequence number returned.
 */
export async function commandLog(
  db: Sql,
  market: string,
  afterSeq: number,
  limit: number,
): Promise<{ seq: number; command: Command }[]> {
  const { rows } = await db.query<{ seq: string; command: unknown }>(
    'SELECT seq, command FROM engine_commands WHERE market = $1 AND seq > $2 ORDER BY seq LIMIT $3',
    [market, afterSeq, limit],
  );
  const log: { seq: number; command: Command }[] = [];
  for (const row of rows) {
    const json = typeof row.command === 'string' ? JSON.parse(row.command) : row.command;
    const commands: Record<string, unknown>[] = Array.isArray(json) ? json : [json];
    const first = Number(row.seq) - commands.length + 1;
    commands.forEach((command, index) => {
      log.push({ seq: first + index, command: decodeCommand(command) });
    });
  }
  return log;
}
