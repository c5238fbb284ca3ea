import type { Sql } from '@platform/sql-storage/database';
import { decideKey, type KeyDecision } from './decide.js';

export interface KeyClaim {
  readonly merchantId: string;
  readonly key: string;
  readonly route: string;
  readonly fingerprint: string;
  readonly now: Date;
  /** How long the first request holds the key before a retry may take it over. */
  readonly lockMs: number;
  /** How long the answer is kept. */
  readonly ttlMs: number;
}

export interface StoredAnswer {
  readonly status: number;
  readonly body: string;
  readonly contentType: string;
}

interface Row {
  route: string;
  fingerprint: string;
  status: number | null;
  response: string | null;
  content_type: string | null;
  locked_until: Date | string;
  expires_at: Date | string;
}

/**
 * What is stored under a key now, decided for this request without taking it (a read: no write,
 * no commit). A route that takes its key inside its own transaction (`claimKey` on its `tx`) asks
 * this first, so a retry is answered before the route's checks run, as the hook does for the others.
 */
export async function peekKey(
  sql: Sql,
  claim: Pick<KeyClaim, 'merchantId' | 'key' | 'route' | 'fingerprint' | 'now'>,
): Promise<KeyDecision & { readonly answer?: StoredAnswer }> {
  const { rows } = await sql.query<Row>(
    `SELECT route, fingerprint, status, response, content_type, locked_until, expires_at
     FROM idempotency_keys WHERE merchant_id = $1 AND key = $2`,
    [claim.merchantId, claim.key],
  );
  const row = rows[0];
  const decision = decideKey(
    row && {
      route: row.route,
      fingerprint: row.fingerprint,
      status: row.status,
      lockedUntilMs: new Date(row.locked_until).getTime(),
      expiresAtMs: new Date(row.expires_at).getTime(),
    },
    claim,
    claim.now.getTime(),
  );
  if (decision.kind === 'replay' && row && row.status !== null) {
    return {
      kind: 'replay',
      answer: {
        status: row.status,
        body: row.response ?? '',
        contentType: row.content_type ?? 'application/json',
      },
    };
  }
  return decision;
}

/**
 * Takes the key for this request, or says why not. One statement takes it when it is free, expired,
 * or held by a request that died (same parameters); the row lock of `ON CONFLICT DO UPDATE` makes two
 * concurrent requests under one key see each other, so exactly one runs.
 */
export async function claimKey(
  sql: Sql,
  claim: KeyClaim,
): Promise<KeyDecision & { readonly answer?: StoredAnswer }> {
  const taken = await takeFreeKey(sql, claim, new Date(claim.now.getTime() + claim.lockMs).toISOString());
  if (taken) return { kind: 'run' };
  const decision = await peekKey(sql, claim);
  // The row changed between the two statements (taken over or expired just now): the caller may
  // not run without holding it, so it is told the key is busy and retries.
  if (decision.kind === 'run') return { kind: 'in_use' };
  return decision;
}

/**
 * Takes a free key and stores its answer in one statement; false when the key is not free (held by
 * a request still running, or answered). A free key is what `claimKey` takes: none, expired, or
 * held by a request that died with the same parameters. Run last in a route's own transaction
 * (a concurrent holder's uncommitted row makes it wait for that commit, then see it), or alone for
 * an answer found before the route's transaction or inside it (which rolled back).
 */
export async function takeWithAnswer(sql: Sql, claim: KeyClaim, answer: StoredAnswer): Promise<boolean> {
  return takeFreeKey(sql, claim, claim.now.toISOString(), answer);
}

/**
 * The one statement that takes a free key (none, expired, or held by a request that died with the
 * same parameters): held until `lockedUntil` while the request runs (no answer), or with its answer.
 */
async function takeFreeKey(
  sql: Sql,
  claim: KeyClaim,
  lockedUntil: string,
  answer?: StoredAnswer,
): Promise<boolean> {
  const now = claim.now.toISOString();
  const { rows } = await sql.query(
    `INSERT INTO idempotency_keys (merchant_id, key, route, fingerprint, status, response, content_type,
       locked_until, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (merchant_id, key) DO UPDATE SET route = EXCLUDED.route, fingerprint = EXCLUDED.fingerprint,
       status = EXCLUDED.status, response = EXCLUDED.response, content_type = EXCLUDED.content_type,
       locked_until = EXCLUDED.locked_until, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
     WHERE idempotency_keys.expires_at <= $9
        OR (idempotency_keys.status IS NULL AND idempotency_keys.locked_until <= $9
            AND idempotency_keys.route = EXCLUDED.route AND idempotency_keys.fingerprint = EXCLUDED.fingerprint)
     RETURNING key`,
    [
      claim.merchantId,
      claim.key,
      claim.route,
      claim.fingerprint,
      answer?.status ?? null,
      answer?.body ?? null,
      answer?.contentType ?? null,
      lockedUntil,
      now,
      new Date(claim.now.getTime() + claim.ttlMs).toISOString(),
    ],
  );
  return rows.length > 0;
}

/** Stores the first answer under the key, to replay for 24 h. */
export async function completeKey(
  sql: Sql,
  merchantId: string,
  key: string,
  answer: StoredAnswer,
): Promise<void> {
  await sql.query(
    `UPDATE idempotency_keys SET status = $3, response = $4, content_type = $5
     WHERE merchant_id = $1 AND key = $2 AND status IS NULL`,
    [merchantId, key, answer.status, answer.body, answer.contentType],
  );
}

/** Frees a key whose request failed inside the gateway (5xx), so a retry runs again. */
export async function releaseKey(sql: Sql, merchantId: string, key: string): Promise<void> {
  await sql.query('DELETE FROM idempotency_keys WHERE merchant_id = $1 AND key = $2 AND status IS NULL', [
    merchantId,
    key,
  ]);
}

/** Removes answers older than their 24 h; returns how many. */
export async function purgeExpiredKeys(sql: Sql, now: Date, limit = 500): Promise<number> {
  const { rows } = await sql.query(
    `DELETE FROM idempotency_keys WHERE ctid IN (
       SELECT ctid FROM idempotency_keys WHERE expires_at <= $1 LIMIT $2) RETURNING key`,
    [now.toISOString(), limit],
  );
  return rows.length;
}
