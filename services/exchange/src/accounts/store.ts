import { randomToken } from '../crypto/tokens.js';
import type { Sql } from '../db/database.js';

export interface Account {
  readonly id: number;
  readonly email: string;
  readonly svcid: string;
  readonly twoFactor: boolean;
  readonly withdrawConfirmation: boolean;
  readonly announcements: boolean;
  /** Every crypto withdrawal goes only to unlocked entries of the address book (src/withdraw-addresses/). */
  readonly withdrawAllowlistOnly: boolean;
  readonly createdAt: Date;
}

export interface NewAccount {
  email: string;
  svcid?: string;
  twoFactor?: boolean;
  withdrawConfirmation?: boolean;
  announcements?: boolean;
}

interface AccountRow {
  id: number;
  email: string;
  svcid: string;
  two_factor: boolean;
  withdraw_confirmation: boolean;
  announcements: boolean;
  withdraw_allowlist_only: boolean;
  created_at: Date;
}

const SELECT_ACCOUNT = `
  SELECT a.id, a.email, a.svcid, a.two_factor, a.withdraw_confirmation, a.announcements,
         a.withdraw_allowlist_only, a.created_at
    FROM accounts a`;

function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    email: row.email,
    svcid: row.svcid,
    twoFactor: row.two_factor,
    withdrawConfirmation: row.withdraw_confirmation,
    announcements: row.announcements,
    withdrawAllowlistOnly: row.withdraw_allowlist_only,
    createdAt: row.created_at,
  };
}

export class DuplicateAccountError extends Error {
  constructor(field: string) {
    super(`an account with this ${field} already exists`);
    this.name = 'DuplicateAccountError';
  }
}

/**
 * Creates a user account, in the caller's transaction. (The gateway public keys of the account object
 * are the exchange's merchant keys from the configuration, the same for every account.)
 */
export async function createAccount(tx: Sql, input: NewAccount): Promise<Account> {
  const email = input.email.trim().toLowerCase();
  const taken = await tx.query<{ email: string; svcid: string }>(
    'SELECT email, svcid FROM accounts WHERE email = $1 OR svcid = $2',
    [email, input.svcid ?? null],
  );
  if (taken.rows[0]) throw new DuplicateAccountError(taken.rows[0].email === email ? 'email' : 'svcid');
  const { rows } = await tx.query<{ id: number }>(
    `INSERT INTO accounts (kind, email, svcid, two_factor, withdraw_confirmation, announcements)
     VALUES ('user', $1, $2, $3, $4, $5) RETURNING id`,
    [
      email,
      input.svcid ?? `SVC${randomToken(12).toUpperCase()}`,
      input.twoFactor ?? false,
      input.withdrawConfirmation ?? false,
      input.announcements ?? true,
    ],
  );
  const id = rows[0]!.id;
  const account = await findAccount(tx, id);
  if (!account) throw new Error('account vanished after insert');
  return account;
}

/** Finds a user account by numeric id, e-mail or svcid. */
export async function findAccount(db: Sql, ref: number | string): Promise<Account | undefined> {
  const byId = typeof ref === 'number' || /^\d+$/.test(ref);
  const { rows } = byId
    ? await db.query<AccountRow>(`${SELECT_ACCOUNT} WHERE a.kind = 'user' AND a.id = $1`, [Number(ref)])
    : await db.query<AccountRow>(
        `${SELECT_ACCOUNT} WHERE a.kind = 'user' AND (a.email = $1 OR a.svcid = $2)`,
        [ref.toLowerCase(), ref],
      );
  return rows[0] ? toAccount(rows[0]) : undefined;
}

export interface AccountChanges {
  svcid?: string;
  twoFactor?: boolean;
  withdrawConfirmation?: boolean;
  announcements?: boolean;
  withdrawAllowlistOnly?: boolean;
}

/** Changes account flags (and the svcid, which only support may change); undefined when no such account. */
export async function updateAccount(
  db: Sql,
  id: number,
  changes: AccountChanges,
): Promise<Account | undefined> {
  if (changes.svcid !== undefined) {
    const taken = await db.query('SELECT 1 FROM accounts WHERE svcid = $1 AND id <> $2', [changes.svcid, id]);
    if (taken.rows.length > 0) throw new DuplicateAccountError('svcid');
  }
  await db.query(
    `UPDATE accounts SET svcid = coalesce($2, svcid), two_factor = coalesce($3, two_factor),
            withdraw_confirmation = coalesce($4, withdraw_confirmation), announcements = coalesce($5, announcements),
            withdraw_allowlist_only = coalesce($6, withdraw_allowlist_only)
      WHERE id = $1 AND kind = 'user'`,
    [
      id,
      changes.svcid ?? null,
      changes.twoFactor ?? null,
      changes.withdrawConfirmation ?? null,
      changes.announcements ?? null,
      changes.withdrawAllowlistOnly ?? null,
    ],
  );
  return findAccount(db, id);
}

export async function listAccounts(db: Sql): Promise<Account[]> {
  const { rows } = await db.query<AccountRow>(`${SELECT_ACCOUNT} WHERE a.kind = 'user' ORDER BY a.id`);
  return rows.map(toAccount);
}

/** Id of a system account: `external` (money entering or leaving the exchange) or `fees`. */
export async function systemAccountId(db: Sql, code: 'external' | 'fees'): Promise<number> {
  const { rows } = await db.query<{ id: number }>('SELECT id FROM accounts WHERE system_code = $1', [code]);
  if (!rows[0]) throw new Error(`system account ${code} is missing: migrations not applied?`);
  return rows[0].id;
}
