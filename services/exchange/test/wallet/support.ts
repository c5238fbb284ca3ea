import { afterAll, beforeAll } from 'vitest';
import { type AppOptions, buildApp } from '../../src/app.js';
import { runCli } from '../../src/cli/commands.js';
import { loadConfig, type WalletConfig } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import type { App } from '../../src/http/typed.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { balancesOf } from '../../src/ledger/store.js';
import { createWallet, type WalletSetup } from '../../src/wallet/setup.js';
import type { Wallet } from '../../src/wallet/wallet.js';
import { reference, secretBox, type Target } from '../support/targets.js';

/** Wallet settings of the tests: sandbox custody, no background loop (tests call `tick()`). */
export function testWalletConfig(overrides: Partial<WalletConfig> = {}): WalletConfig {
  const base = loadConfig({ DEPOSIT_CONFIRMATIONS: 'btc=2,ltc=2,eth=3,usdt=3,xrp=1' }).wallet;
  return { ...base, sandboxWithdrawalDelayMs: 0, sendLeaseMs: 0, ...overrides };
}

export interface WalletApp {
  app(): App;
  wallet(): Wallet;
  db(): Database;
}

/** An app with a wallet over the target's storage, built in beforeAll. */
export function useWalletApp(
  target: Target,
  setup: Partial<Omit<WalletSetup, 'db' | 'reference'>> = {},
  appOptions: () => Partial<AppOptions> = () => ({}),
): WalletApp {
  let app: App | undefined;
  let wallet: Wallet | undefined;
  beforeAll(async () => {
    wallet = await createWallet({ db: target.db(), reference, config: testWalletConfig(), ...setup });
    app = await buildApp({ db: target.db(), reference, secretBox, wallet, ...appOptions() });
  });
  afterAll(async () => {
    await app?.close();
  });
  return {
    app: () => app!,
    wallet: () => wallet!,
    db: () => target.db(),
  };
}

/** Runs an operator command in-process; returns what it printed. */
export async function admin(w: WalletApp, ...argv: string[]): Promise<Record<string, unknown>> {
  let output: unknown;
  await runCli(argv, { db: w.db(), reference, secretBox, wallet: w.wallet(), print: (v) => (output = v) });
  return output as Record<string, unknown>;
}

/** Balances of an account as {currency: [available, locked]} in minor units. */
export async function balanceMap(db: Database, accountId: number): Promise<Record<string, [bigint, bigint]>> {
  const out: Record<string, [bigint, bigint]> = {};
  for (const b of await balancesOf(db, accountId)) out[b.currency] = [b.available, b.locked];
  return out;
}

export async function expectReconciled(db: Database): Promise<void> {
  const report = await reconcile(db);
  if (!report.ok) throw new Error(`reconcile failed: ${report.problems.join('; ')}`);
}
