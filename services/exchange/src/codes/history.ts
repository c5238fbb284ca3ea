import type { HistorySource } from '../wallet/history.js';

/**
 * Transfer codes in the assets history (src/wallet/history.ts): a code created by the account is a
 * `withdraw` item (pending while the amount is in escrow, done once redeemed, canceled when cancelled),
 * a code the account redeemed a `deposit` item (done), provider `svc_code`. The destination is the
 * provider name, as for fiat deposits, never the code. Item ids are code ids, so a code and a
 * withdrawal request can share an id within one list (each source numbers its own items).
 */
export const CODE_HISTORY_SOURCES: readonly HistorySource[] = [
  {
    name: 'svc_codes_issued',
    sql: `SELECT id, 'withdraw'::text AS type, created_at, 'svc_code'::text AS destination, currency, amount,
            CASE WHEN status = 'redeemed' THEN 'done' WHEN status = 'canceled' THEN 'canceled' ELSE 'pending' END
              AS status,
            'svc_code'::text AS provider
       FROM svc_codes WHERE owner_id = $1`,
  },
  {
    name: 'svc_codes_redeemed',
    sql: `SELECT id, 'deposit'::text AS type, redeemed_at AS created_at, 'svc_code'::text AS destination, currency,
            amount, 'done'::text AS status, 'svc_code'::text AS provider
       FROM svc_codes WHERE redeemer_id = $1`,
  },
];
