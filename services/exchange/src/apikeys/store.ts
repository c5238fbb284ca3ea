import type { SecretBox } from '../crypto/secret-box.js';
import { randomToken } from '../crypto/tokens.js';
import type { Sql } from '../db/database.js';
import type { StpMode } from '../matching/types.js';

/**
 * `withdraw_allowlisted` is given instead of `withdraw`: the key may send crypto only to confirmed,
 * unlocked entries of the account's withdrawal address book (src/withdraw-addresses/), and may not
 * add entries, create transfer codes or withdraw fiat.
 */
export const SCOPES = ['read', 'trade', 'withdraw', 'withdraw_allowlisted'] as const;
export type Scope = (typeof SCOPES)[number];
export type Protocol = 'v2' | 'v3';

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

export interface ApiKeyInfo {
  readonly id: number;
  readonly accountId: number;
  readonly publicKey: string;
  readonly scopes: readonly Scope[];
  readonly enabled: boolean;
  readonly revoked: boolean;
  readonly label: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
}

/** What authentication needs: the key row with its still-encrypted secret. */
export interface ApiKeyForAuth extends ApiKeyInfo {
  readonly secretBox: string;
}

interface KeyRow {
  id: number;
  account_id: number;
  public_key: string;
  secret_box: string;
  scopes: Scope[];
  enabled: boolean;
  revoked_at: Date | null;
  label: string;
  created_at: Date;
  last_used_at: Date | null;
}

const COLUMNS =
  'id, account_id, public_key, secret_box, scopes, enabled, revoked_at, label, created_at, last_used_at';

function toKey(row: KeyRow): ApiKeyForAuth {
  return {
    id: row.id,
    accountId: row.account_id,
    publicKey: row.public_key,
    secretBox: row.secret_box,
    scopes: row.scopes,
    enabled: row.enabled && row.revoked_at === null,
    revoked: row.revoked_at !== null,
    label: row.label,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

/** Issues a key; the returned secret is shown once and stored only encrypted. */
export async function issueApiKey(
  db: Sql,
  box: SecretBox,
  accountId: number,
  scopes: readonly Scope[],
  label = '',
): Promise<{ key: ApiKeyInfo; secret: string }> {
  const publicKey = randomToken(40);
  const secret = randomToken(40);
  const { rows } = await db.query<KeyRow>(
    `INSERT INTO api_keys (account_id, public_key, secret_box, scopes, label)
     VALUES ($1, $2, $3, $4::text[], $5) RETURNING ${COLUMNS}`,
    [accountId, publicKey, box.seal(secret, publicKey), [...new Set(scopes)], label],
  );
  const { secretBox: _hidden, ...key } = toKey(rows[0]!);
  return { key, secret };
}

export async function findApiKey(db: Sql, publicKey: string): Promise<ApiKeyForAuth | undefined> {
  const { rows } = await db.query<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE public_key = $1`, [
    publicKey,
  ]);
  return rows[0] ? toKey(rows[0]) : undefined;
}

export async function listApiKeys(db: Sql, accountId: number): Promise<ApiKeyInfo[]> {
  const { rows } = await db.query<KeyRow>(
    `SELECT ${COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY id`,
    [accountId],
  );
  return rows.map((row) => {
    const { secretBox: _hidden, ...key } = toKey(row);
    return key;
  });
}

/**
 * Keys' `stp` defaults as read lately, per database handle: every order that names no mode needs its
 * key's, and a primary-key read per order was a statement more per order on the hot path. Kept
 * `STP_DEFAULT_CACHE_MS`; `setApiKeyStp` on the same handle drops its key's at once (the operator
 * tool runs through the server's loopback endpoint), other processes of a cluster see a change
 * within that time.
 */
const STP_DEFAULT_CACHE_MS = 1_000;
const STP_DEFAULT_CACHE_KEYS = 10_000;
const stpDefaults = new WeakMap<
  Sql,
  Map<number, { readonly stp: StpMode | undefined; readonly until: number }>
>();

function stpCacheOf(db: Sql): Map<number, { readonly stp: StpMode | undefined; readonly until: number }> {
  let cache = stpDefaults.get(db);
  if (cache === undefined) {
    cache = new Map();
    stpDefaults.set(db, cache);
  }
  return cache;
}

/** Sets the key's default self-trade prevention mode (null: the engine's default); false when no unrevoked key. */
export async function setApiKeyStp(db: Sql, publicKey: string, stp: StpMode | null): Promise<boolean> {
  const { rows } = await db.query<{ id: number }>(
    'UPDATE api_keys SET stp = $2 WHERE public_key = $1 AND revoked_at IS NULL RETURNING id',
    [publicKey, stp],
  );
  for (const row of rows) stpCacheOf(db).delete(row.id);
  return rows.length > 0;
}

/** The key's default self-trade prevention mode, undefined when it has none (086_api_key_stp.sql). */
export async function apiKeyStp(db: Sql, keyId: number, now = Date.now()): Promise<StpMode | undefined> {
  const cache = stpCacheOf(db);
  const known = cache.get(keyId);
  if (known !== undefined && known.until > now) return known.stp;
  const { rows } = await db.query<{ stp: StpMode | null }>('SELECT stp FROM api_keys WHERE id = $1', [keyId]);
  const stp = rows[0]?.stp ?? undefined;
  if (cache.size >= STP_DEFAULT_CACHE_KEYS) cache.clear();
  cache.set(keyId, { stp, until: now + STP_DEFAULT_CACHE_MS });
  return stp;
}

/** Enables or disables a key that is not revoked; false when no such key. */
export async function setApiKeyEnabled(db: Sql, publicKey: string, enabled: boolean): Promise<boolean> {
  const { rows } = await db.query(
    'UPDATE api_keys SET enabled = $2 WHERE public_key = $1 AND revoked_at IS NULL RETURNING id',
    [publicKey, enabled],
  );
  return rows.length > 0;
}

/** Revokes a key for good; false when no such key. */
export async function revokeApiKey(db: Sql, publicKey: string): Promise<boolean> {
  const { rows } = await db.query(
    'UPDATE api_keys SET enabled = false, revoked_at = coalesce(revoked_at, now()) WHERE public_key = $1 RETURNING id',
    [publicKey],
  );
  return rows.length > 0;
}

/** What recording a request's nonce found: `recorded`, or why the request must be refused. */
export type NonceOutcome = 'recorded' | 'reused' | 'disabled' | 'revoked' | 'unknown';

/**
 * Accepts `nonce` only if the key is still enabled and the nonce is greater than the last one this
 * key used on this protocol, and records it with the use time, in one conditional UPDATE: of two
 * requests racing with one nonce, one wins. Checking the key's status here (and not only when it was
 * looked up) is what lets authentication cache keys: a key disabled since then is refused now.
 */
export async function consumeNonce(
  db: Sql,
  keyId: number,
  protocol: Protocol,
  nonce: number,
): Promise<NonceOutcome> {
  const column = protocol === 'v2' ? 'last_nonce_v2' : 'last_nonce_v3';
  const { rows } = await db.query(
    `UPDATE api_keys SET ${column} = $2, last_used_at = now()
      WHERE id = $1 AND ${column} < $2 AND enabled AND revoked_at IS NULL RETURNING id`,
    [keyId, nonce],
  );
  if (rows.length > 0) return 'recorded';
  // Refused: one more lookup, on this path only, to say why.
  const status = await db.query<{ enabled: boolean; revoked: boolean }>(
    'SELECT enabled, revoked_at IS NOT NULL AS revoked FROM api_keys WHERE id = $1',
    [keyId],
  );
  const key = status.rows[0];
  if (!key) return 'unknown';
  if (key.revoked) return 'revoked';
  return key.enabled ? 'reused' : 'disabled';
}
