import { CliError, runCli } from '../cli/commands.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Database } from '../db/database.js';
import type { App } from '../http/typed.js';
import type { ReferenceData } from '../reference/load.js';
import type { WalletLog } from './context.js';
import { startOperatorEndpoint } from './operator.js';
import type { Wallet } from './wallet.js';

export interface WalletServices {
  readonly db: Database;
  readonly reference: ReferenceData;
  readonly secretBox: SecretBox;
  readonly wallet: Wallet;
  readonly dataDir: string;
}

/**
 * server.ts: starts the wallet's background loop and, on the embedded database, the loopback
 * operator endpoint (sandbox deposit commands while the server holds it), both stopped with the app.
 */
export async function startWalletServices(app: App, services: WalletServices): Promise<void> {
  // Only on the embedded database (PGlite), which the operator tool cannot open while this server
  // runs; with PostgreSQL the tool opens the database itself (and the nodes of a cluster may share
  // DATA_DIR, where they raced on the endpoint's file).
  const endpoint = services.db.kind === 'pglite' ? await operatorEndpoint(services) : undefined;
  if (endpoint) app.addHook('onClose', () => endpoint.close());
  services.wallet.useLog(app.log);
  services.wallet.start();
  app.log.info({ coins: services.wallet.currencies, operatorPort: endpoint?.port }, 'wallet started');
}

function operatorEndpoint(services: WalletServices) {
  return startOperatorEndpoint(services.dataDir, async (argv) => {
    if (argv[0] !== 'deposit') return { code: 2, error: 'only deposit commands are run by the server' };
    let output: unknown;
    try {
      const code = await runCli(argv, {
        db: services.db,
        reference: services.reference,
        secretBox: services.secretBox,
        wallet: services.wallet,
        print: (value) => {
          output = value;
        },
      });
      return { code, output };
    } catch (error) {
      if (error instanceof CliError || (error instanceof TypeError && 'code' in error)) {
        return { code: 2, error: error.message };
      }
      throw error;
    }
  });
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
