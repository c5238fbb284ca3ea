import { randomBytes } from 'node:crypto';
import type { Sql } from '@platform/sql-storage/database';
import type { Merchant } from '../catalog/catalog.js';

/** A merchant's secrets in effect: the current one signs callbacks; the previous one is still accepted until `untilMs`. */
export interface MerchantSecrets {
  readonly current: string;
  readonly previous?: { readonly secret: string; readonly untilMs: number };
}

/**
 * The secrets of each merchant, rotated at run time (`npm run admin -w services/paygate -- secrets
 * rotate <merchant>`) and kept in the database so every gateway instance uses the same. A merchant
 * never rotated uses its configured secret. Read through a short cache (one query per merchant and
 * `cacheMs`), so an instance follows a rotation within that time.
 */
export class SecretBook {
  /** Per merchant: the read (shared by every request while it runs, so an expiry costs one query) and when it began. */
  readonly #cache = new Map<string, { secrets: Promise<MerchantSecrets>; readAt: number }>();

  constructor(
    private readonly db: Sql,
    private readonly now: () => number,
    private readonly cacheMs = 1_000,
  ) {}

  secretsOf(merchant: Merchant): Promise<MerchantSecrets> {
    const cached = this.#cache.get(merchant.id);
    const now = this.now();
    if (cached && now - cached.readAt < this.cacheMs && now >= cached.readAt) return cached.secrets;
    const entry = { secrets: this.read(merchant), readAt: now };
    this.#cache.set(merchant.id, entry);
    // A failed read is not kept: the next request reads again.
    entry.secrets.catch(() => {
      if (this.#cache.get(merchant.id) === entry) this.#cache.delete(merchant.id);
    });
    return entry.secrets;
  }

  private async read(merchant: Merchant): Promise<MerchantSecrets> {
    const { rows } = await this.db.query<{
      secret: string;
      previous_secret: string | null;
      previous_until: Date | string | null;
    }>('SELECT secret, previous_secret, previous_until FROM merchant_secrets WHERE merchant_id = $1', [
      merchant.id,
    ]);
    const row = rows[0];
    return row
      ? {
          current: row.secret,
          ...(row.previous_secret && row.previous_until
            ? { previous: { secret: row.previous_secret, untilMs: new Date(row.previous_until).getTime() } }
            : {}),
        }
      : { current: merchant.secret };
  }

  /** The secrets a merchant request may be signed with now: the current one, and the previous in its grace period. */
  async accepted(merchant: Merchant): Promise<string[]> {
    const { current, previous } = await this.secretsOf(merchant);
    return previous && this.now() < previous.untilMs ? [current, previous.secret] : [current];
  }

  /** The secret callbacks are signed with. */
  async signing(merchant: Merchant): Promise<string> {
    return (await this.secretsOf(merchant)).current;
  }

  /** The secret before the last rotation while its grace period runs (the sandbox signs some callbacks with it). */
  async previousInGrace(merchant: Merchant): Promise<string | undefined> {
    const { previous } = await this.secretsOf(merchant);
    return previous && this.now() < previous.untilMs ? previous.secret : undefined;
  }

  forget(): void {
    this.#cache.clear();
  }
}

/** What a secret the operator gives (`secrets rotate --secret`) must be: as strong and as plain as a generated one. */
export const GIVEN_SECRET_RULE = '32-128 characters: letters, digits, "_" and "-"';

/**
 * Checks a secret the operator chose. Generated ones are `whsec_` and 48 hex digits (54 characters):
 * a given one must carry at least 32 characters of the same plain set (letters, digits, `_`, `-`;
 * nothing a shell, a YAML file or an environment variable would mangle), be no longer than 128,
 * and differ from the secret it replaces (a rotation to itself would leave nothing to retire).
 */
export function checkGivenSecret(
  value: string,
  current: string,
): { readonly ok: true } | { readonly ok: false; readonly problem: string } {
  if (!/^[A-Za-z0-9_-]{32,128}$/.test(value)) {
    return { ok: false, problem: `--secret must be ${GIVEN_SECRET_RULE}` };
  }
  if (value === current)
    return { ok: false, problem: '--secret is the secret in effect now: give a new one' };
  return { ok: true };
}

/**
 * Gives a merchant a new secret (random unless given); the one in effect until now stays accepted
 * for `graceMs`. Returns the new secret (shown once to the operator).
 */
export async function rotateSecret(
  db: Sql,
  merchant: Merchant,
  nowMs: number,
  graceMs: number,
  secret = `whsec_${randomBytes(24).toString('hex')}`,
): Promise<{ secret: string; previousUntil: Date }> {
  const previousUntil = new Date(nowMs + graceMs);
  await db.query(
    `INSERT INTO merchant_secrets (merchant_id, secret, previous_secret, previous_until, rotated_at)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (merchant_id) DO UPDATE SET previous_secret = merchant_secrets.secret,
       secret = EXCLUDED.secret, previous_until = EXCLUDED.previous_until, rotated_at = EXCLUDED.rotated_at`,
    [merchant.id, secret, merchant.secret, previousUntil.toISOString(), new Date(nowMs).toISOString()],
  );
  return { secret, previousUntil };
}
