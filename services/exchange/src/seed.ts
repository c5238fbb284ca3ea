import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createAccount, findAccount, systemAccountId } from './accounts/store.js';
import { issueApiKey, listApiKeys } from './apikeys/store.js';
import type { SecretBox } from './crypto/secret-box.js';
import type { Database } from './db/database.js';
import { adjustment } from './ledger/entry.js';
import { postEntry } from './ledger/store.js';
import { parseAmount, rescale } from './money/decimal.js';
import type { ReferenceData } from './reference/load.js';

export const DEMO_EMAIL = 'demo@example.com';
const DEMO_LABEL = 'demo';

/** Starting balances of the demo account (currencies missing from the reference data are skipped). */
export const DEMO_BALANCES: Readonly<Record<string, string>> = {
  btc: '2.5',
  ltc: '100',
  eth: '40',
  usdt: '25000',
  xrp: '10000',
  uah: '1000000',
  usd: '20000',
  eur: '10000',
  rub: '500000',
};

export interface DemoAccount {
  readonly email: string;
  readonly svcid: string;
  /** File under the data directory receiving `{"apiKey", "apiSecret"}`. */
  readonly keyFile: string;
}

/**
 * The demo account and a second one to trade with: self-trade prevention cancels an account's own
 * resting order instead of trading with it, so seeing a trade needs two accounts.
 */
export const DEMO_ACCOUNTS: readonly [DemoAccount, DemoAccount] = [
  { email: DEMO_EMAIL, svcid: 'SVCDEMO', keyFile: 'demo-api-key.json' },
  { email: 'demo2@example.com', svcid: 'SVCDEMO2', keyFile: 'demo2-api-key.json' },
];

export interface DemoCredentials {
  readonly apiKey: string;
  readonly apiSecret: string;
  readonly accountId: number;
  readonly created: boolean;
}

/**
 * Makes sure the demo account exists with its balances and an enabled key, and writes
 * `<dataDir>/<keyFile>` (`{"apiKey", "apiSecret"}`, mode 0600). Safe to run on every start:
 * balances are credited once (idempotency keys), the secret is decrypted from storage.
 */
export async function seedDemo(
  db: Database,
  box: SecretBox,
  reference: ReferenceData,
  dataDir: string,
  who: DemoAccount = DEMO_ACCOUNTS[0],
): Promise<DemoCredentials> {
  let account = await findAccount(db, who.email);
  const created = !account;
  if (!account) {
    account = await db.transaction((tx) =>
      createAccount(tx, { email: who.email, svcid: who.svcid, withdrawConfirmation: false }),
    );
  }
  const external = await systemAccountId(db, 'external');
  for (const [code, amount] of Object.entries(DEMO_BALANCES)) {
    const currency = reference.currency(code);
    if (!currency) continue;
    const parsed = parseAmount(amount, currency.precision.real);
    if (!parsed.ok) continue;
    const minor = rescale(parsed.value, currency.precision.real, reference.ledgerPrecision(code));
    const built = adjustment(account.id, external, code, minor, 'demo account seed');
    if (!built.ok) throw new Error(built.detail);
    const posted = await postEntry(db, { ...built.entry, idempotencyKey: `demo-seed:${account.id}:${code}` });
    if (!posted.ok) throw new Error(`seeding ${code}: ${posted.detail}`);
  }
  const existing = (await listApiKeys(db, account.id)).find((key) => key.label === DEMO_LABEL && key.enabled);
  let credentials: { apiKey: string; apiSecret: string };
  if (existing) {
    const { rows } = await db.query<{ secret_box: string }>('SELECT secret_box FROM api_keys WHERE id = $1', [
      existing.id,
    ]);
    credentials = {
      apiKey: existing.publicKey,
      apiSecret: box.open(rows[0]!.secret_box, existing.publicKey),
    };
  } else {
    const issued = await issueApiKey(db, box, account.id, ['read', 'trade', 'withdraw'], DEMO_LABEL);
    credentials = { apiKey: issued.key.publicKey, apiSecret: issued.secret };
  }
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(path.join(dataDir, who.keyFile), `${JSON.stringify(credentials, null, 2)}\n`, {
    mode: 0o600,
  });
  return { ...credentials, accountId: account.id, created };
}
