import { randomBytes } from 'node:crypto';
import { createAccount } from '../../src/accounts/store.js';
import { issueApiKey } from '../../src/apikeys/store.js';
import type { SecretBox } from '../../src/crypto/secret-box.js';
import type { Database } from '../../src/db/database.js';
import { credit } from '../../test/support/accounts.js';

/** An API key as the load generators sign with it. */
export interface BenchKey {
  readonly apiKey: string;
  readonly secret: string;
}

/** `count` new accounts, each funded with 10^20 minor units of btc and uah, with a read+trade key. */
export async function fundedKeys(
  db: Database,
  secretBox: SecretBox,
  count: number,
  label: string,
): Promise<BenchKey[]> {
  const keys: BenchKey[] = [];
  for (let i = 0; i < count; i += 1) {
    const account = await db.transaction((tx) =>
      createAccount(tx, { email: `${label}-${i}-${randomBytes(4).toString('hex')}@x.io` }),
    );
    await credit(db, account.id, 'btc', 10n ** 20n);
    await credit(db, account.id, 'uah', 10n ** 20n);
    const issued = await issueApiKey(db, secretBox, account.id, ['read', 'trade']);
    keys.push({ apiKey: issued.key.publicKey, secret: issued.secret });
  }
  return keys;
}
