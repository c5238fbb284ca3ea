import type { HistorySource } from '../wallet/history.js';

/**
 * Transfer codes in the assets history (src/wallet/history.ts): a code created by the account is a
 * `withdraw` item (pending while the amount is in escrow, done once redeemed, canceled when cancelled),
 * a code the account redeemed a `deposit` item (done), provider `svc_code`. The destination is the
 * provider name, as for fiat deposits, never the code.
 *
 * Item ids are `CODE_HISTORY_ID_OFFSET + code id`, so that no code item shares an id with a
 * withdrawal or a deposit (whose items carry their own ids, those of withdraw/details and
 * deposit/details): from an item, `svc_codes/details {id: item.id - CODE_HISTORY_ID_OFFSET}` (an issued
 * code) or the same id in redeemed-by-me (a redeemed one). Still int32, as the spec types ids, up to
 * 1 147 483 647 codes.
 */
export const CODE_HISTORY_ID_OFFSET = 1_000_000_000;

export const CODE_HISTORY_SOURCES: readonly HistorySource[] = [
  {
    name: 'svc_codes_issued',
    sql: `SELECT ${CODE_HISTORY_ID_OFFSET} + id AS id, 'withdraw'::text AS type, created_at, 'svc_code'::text AS destination, currency, amount,
            CASE WHEN status = 'redeemed' THEN 'done' WHEN status = 'canceled' THEN 'canceled' ELSE 'pending' END
              AS status,
            'svc_code'::text AS provider
       FROM svc_codes WHERE owner_id = $1`,
  },
  {
    name: 'svc_codes_redeemed',
    sql: `SELECT ${CODE_HISTORY_ID_OFFSET} + id AS id, 'deposit'::text AS type, redeemed_at AS created_at, 'svc_code'::text AS destination, currency,
            amount, 'done'::text AS status, 'svc_code'::text AS provider
       FROM svc_codes WHERE redeemer_id = $1`,
  },
];
