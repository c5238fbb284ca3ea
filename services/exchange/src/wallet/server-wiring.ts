import { CliError, runCli } from '../cli/commands.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Database } from '../db/database.js';
import type { App } from '../http/typed.js';
import type { ReferenceData } from '../reference/load.js';
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
 * server.ts: starts the wallet's background loop and the loopback operator endpoint (sandbox
 * deposit commands while the server holds the embedded database), both stopped with the app.
 */
export async function startWalletServices(app: App, services: WalletServices): Promise<void> {
  const endpoint = await startOperatorEndpoint(services.dataDir, async (argv) => {
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
  app.addHook('onClose', () => endpoint.close());
  services.wallet.useLog(app.log);
  services.wallet.start();
  app.log.info({ coins: services.wallet.currencies, operatorPort: endpoint.port }, 'wallet started');
}
