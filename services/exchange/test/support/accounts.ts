import { randomBytes } from 'node:crypto';
import { createAccount, systemAccountId } from '../../src/accounts/store.js';
import { issueApiKey, type Scope } from '../../src/apikeys/store.js';
import type { Database } from '../../src/db/database.js';
import { adjustment } from '../../src/ledger/entry.js';
import { postEntry } from '../../src/ledger/store.js';
import { secretBox } from './targets.js';

/** A fresh account with a random e-mail. */
export async function newAccount(db: Database) {
  const email = `user-${randomBytes(5).toString('hex')}@example.com`;
  return db.transaction((tx) => createAccount(tx, { email }));
}

/** A fresh account with one API key; returns the key and its secret. */
export async function accountWithKey(db: Database, scopes: Scope[] = ['read']) {
  const account = await newAccount(db);
  const { key, secret } = await issueApiKey(db, secretBox, account.id, scopes);
  return { account, apiKey: key.publicKey, secret, keyId: key.id };
}

/** Credits minor units to an account through a journalled adjustment. */
export async function credit(
  db: Database,
  accountId: number,
  currency: string,
  minor: bigint,
): Promise<void> {
  const external = await systemAccountId(db, 'external');
  const built = adjustment(accountId, external, currency, minor, 'test credit');
  if (!built.ok) throw new Error(built.detail);
  const posted = await postEntry(db, built.entry);
  if (!posted.ok) throw new Error(posted.detail);
}
