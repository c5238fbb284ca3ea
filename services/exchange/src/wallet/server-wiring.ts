import type { App } from '../http/typed.js';
import type { WalletLog } from './context.js';
import type { Wallet } from './wallet.js';

/**
 * server.ts: starts the wallet's background loop, stopped with the app. (The operator tool's
 * `deposit` commands reach a running server on the embedded database through the loopback operator
 * endpoint, src/cli/server-endpoint.ts, as every other command does.)
 */
export function startWalletServices(app: App, wallet: Wallet): void {
  wallet.useLog(app.log);
  wallet.start();
  app.log.info({ coins: wallet.currencies }, 'wallet started');
}

/**
 * The demo account gets a deposit address in every sandbox coin at start (once), so that its
 * `deposit/info` shows one right away and a simulated deposit can be sent to it.
 */
export async function seedDemoAddresses(wallet: Wallet, accountId: number, log: WalletLog): Promise<void> {
  const sandbox = wallet.sandbox;
  for (const currency of wallet.currencies) {
    if (wallet.context.custodyOf(currency) !== sandbox) continue;
    await wallet.createAddress(accountId, currency).catch((error: unknown) => {
      log.warn({ err: error, currency }, 'demo deposit address not created');
    });
  }
}
