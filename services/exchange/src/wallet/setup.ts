/**
 * Builds the wallet from its settings: a node custody for each coin with `CUSTODY_NODE_<CODE>_URL`,
 * the sandbox custody for the other coins (unless `CUSTODY_SANDBOX=false`: then they are not served
 * and their wallet methods answer `custody_unavailable`).
 */
import type { WalletConfig } from '../config.js';
import type { Custody } from '../custody/custody.js';
import { NodeCustody } from '../custody/node.js';
import { SandboxCustody } from '../custody/sandbox.js';
import type { Database } from '../db/database.js';
import type { RouteDeps } from '../http/deps.js';
import type { App } from '../http/typed.js';
import type { ReferenceData } from '../reference/load.js';
import { assetsHistoryRoutes } from './assets-history.js';
import { mailConfirmation, WITHDRAWAL_LINK_PURPOSE } from './confirmation-mail.js';
import type { WalletLog } from './context.js';
import { depositRoutes } from './deposits.js';
import { Wallet, type WithdrawalConfirmation } from './wallet.js';
import { withdrawalRoutes } from './withdrawals.js';

export interface WalletSetup {
  readonly db: Database;
  readonly reference: ReferenceData;
  readonly config: WalletConfig;
  readonly log?: WalletLog;
  readonly now?: () => number;
  readonly confirmation?: WithdrawalConfirmation;
}

export async function createWallet(setup: WalletSetup): Promise<Wallet> {
  const { config, reference } = setup;
  const custodies = new Map<string, Custody>();
  for (const code of Object.keys(config.nodes)) {
    const currency = reference.currency(code);
    if (!currency?.coin)
      throw new Error(`CUSTODY_NODE_${code.toUpperCase()}_URL names no coin of the reference data`);
  }
  const sandbox = config.sandbox
    ? new SandboxCustody({
        db: setup.db,
        withdrawalDelayMs: config.sandboxWithdrawalDelayMs,
        ...(setup.now ? { now: setup.now } : {}),
      })
    : undefined;
  for (const currency of reference.currencies) {
    if (!currency.coin) continue;
    const node = config.nodes[currency.code];
    if (node) {
      const custody = new NodeCustody({
        currency: currency.code,
        url: node.url,
        cookieFile: node.cookieFile,
        wallet: node.wallet,
      });
      await custody
        .open()
        .catch((error: unknown) =>
          setup.log?.warn(
            { err: error, currency: currency.code },
            'custody node not reachable at start; will retry on use',
          ),
        );
      custodies.set(currency.code, custody);
    } else if (sandbox) {
      custodies.set(currency.code, sandbox);
    }
  }
  return new Wallet({
    db: setup.db,
    reference,
    custodies,
    confirmations: config.confirmations,
    pollMs: config.pollMs,
    sendLeaseMs: config.sendLeaseMs,
    confirmationTtlMs: config.confirmationTtlMs,
    failpoint: config.failpoint,
    ...(setup.confirmation ? { confirmation: setup.confirmation } : {}),
    ...(setup.log ? { log: setup.log } : {}),
    ...(setup.now ? { now: setup.now } : {}),
  });
}

/** app.ts: the wallet's routes, and its loop stopped when the app closes. */
export function walletMethodRoutes(app: App, deps: RouteDeps): void {
  const wallet = deps.wallet;
  if (wallet) {
    app.addHook('onClose', () => wallet.close());
    deps.links.handle(WITHDRAWAL_LINK_PURPOSE, (tx, id, action) => wallet.handleLink(tx, id, action));
    wallet.useConfirmation(mailConfirmation(deps.links, deps.mailer, deps.reference));
  }
  depositRoutes(app, deps);
  withdrawalRoutes(app, deps);
  assetsHistoryRoutes(app, deps);
}
