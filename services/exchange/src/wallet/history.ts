/**
 * Assets history (`POST /v3/auth/assets-history[/withdraws|/deposits]`): one query over a UNION ALL
 * of per-source SELECTs. Every source gives the same columns, in this order (the documented list):
 *
 *   id integer, type text ('deposit' | 'withdraw'), created_at timestamptz, destination text,
 *   currency text (lower-case code), amount numeric (ledger minor units), status text ('done' |
 *   'pending' | 'canceled'), provider text (null for crypto)
 *
 * and restricts itself to the account `$1`. Deposits and withdrawals are built in; other features
 * add theirs with `registerHistorySource` (transfer codes: a created code is a withdraw item, a
 * redeemed code a deposit item).
 */
import type { Sql } from '../db/database.js';
import { amountToNumber } from '../money/decimal.js';
import type { ReferenceData } from '../reference/load.js';

export interface HistorySource {
  readonly name: string;
  /** SELECT of the documented columns, for the account `$1` only. */
  readonly sql: string;
}

const sources: HistorySource[] = [
  {
    name: 'deposits',
    sql: `SELECT id, 'deposit'::text AS type, created_at, coalesce(address, provider, '') AS destination, currency,
            amount, CASE status WHEN 'credited' THEN 'done' WHEN 'pending' THEN 'pending' ELSE 'canceled' END AS status,
            provider
       FROM deposits WHERE account_id = $1`,
  },
  {
    name: 'withdrawals',
    sql: `SELECT id, 'withdraw'::text AS type, created_at, destination, currency, amount,
            CASE WHEN status = 'done' THEN 'done'
                 WHEN status IN ('canceled', 'expired', 'failed') THEN 'canceled' ELSE 'pending' END AS status,
            provider
       FROM withdrawals WHERE account_id = $1`,
  },
];

/** Adds a source (once per name). */
export function registerHistorySource(source: HistorySource): void {
  if (!sources.some((s) => s.name === source.name)) sources.push(source);
}

/** Largest accepted `per_page` (the spec gives no maximum). */
export const HISTORY_MAX_PER_PAGE = 100;

export interface HistoryQuery {
  readonly accountId: number;
  readonly types: readonly ('deposit' | 'withdraw')[];
  /** Lower-case codes; undefined: every currency. */
  readonly currencies?: readonly string[];
  readonly statuses?: readonly string[];
  /** Seconds, inclusive bounds. */
  readonly dateFrom?: number;
  readonly dateTo?: number;
  readonly page: number;
  readonly perPage: number;
  readonly orderBy: 'created_at' | 'amount';
  readonly orderDir: 'asc' | 'desc';
}

export interface HistoryItem {
  id: number;
  type: 'deposit' | 'withdraw';
  created_at: string;
  destination: string;
  currency: number;
  amount: number;
  status: 'done' | 'pending' | 'canceled';
}

export interface HistoryPage {
  total_items: number;
  items: HistoryItem[];
  currencies: string[];
}

const FILTERS = `WHERE h.type = ANY($2::text[])
    AND ($3::text[] IS NULL OR h.currency = ANY($3::text[]))
    AND ($4::text[] IS NULL OR h.status = ANY($4::text[]))
    AND ($5::timestamptz IS NULL OR h.created_at >= $5::timestamptz)
    AND ($6::timestamptz IS NULL OR h.created_at <= $6::timestamptz)`;

export async function assetsHistory(
  db: Sql,
  reference: ReferenceData,
  query: HistoryQuery,
): Promise<HistoryPage> {
  const union = sources.map((s) => `(${s.sql})`).join('\nUNION ALL\n');
  const params = [
    query.accountId,
    [...query.types],
    query.currencies ? [...query.currencies] : null,
    query.statuses ? [...query.statuses] : null,
    query.dateFrom === undefined ? null : new Date(query.dateFrom * 1000),
    query.dateTo === undefined ? null : new Date(query.dateTo * 1000),
  ];
  const dir = query.orderDir === 'asc' ? 'ASC' : 'DESC';
  // Amounts of different currencies compare by value: minor units over 10^ledger precision.
  const key = query.orderBy === 'amount' ? 'h.amount / power(10::numeric, c.precision)' : 'h.created_at';
  const items = await db.query<{
    id: number;
    type: 'deposit' | 'withdraw';
    created_at: Date;
    destination: string;
    currency: string;
    amount: string;
    status: 'done' | 'pending' | 'canceled';
  }>(
    `WITH h AS (${union})
     SELECT h.id, h.type, h.created_at, h.destination, h.currency, h.amount::text AS amount, h.status
       FROM h JOIN currencies c ON c.code = h.currency
     ${FILTERS}
     ORDER BY ${key} ${dir}, h.created_at ${dir}, h.type ${dir}, h.id ${dir}
     LIMIT $7 OFFSET $8`,
    [...params, query.perPage, (query.page - 1) * query.perPage],
  );
  const summary = await db.query<{ total: number; currencies: string[] | null }>(
    `WITH h AS (${union})
     SELECT count(*)::int AS total, array_agg(DISTINCT h.currency) AS currencies FROM h ${FILTERS}`,
    params,
  );
  const row = summary.rows[0];
  return {
    total_items: row?.total ?? 0,
    items: items.rows.map((item) => ({
      id: item.id,
      type: item.type,
      created_at: new Date(item.created_at).toISOString(),
      destination: item.destination,
      currency: reference.currency(item.currency)?.id ?? 0,
      amount: amountToNumber(BigInt(item.amount), reference.ledgerPrecision(item.currency)),
      status: item.status,
    })),
    currencies: [...(row?.currencies ?? [])].sort(),
  };
}
