import type { SecretBox } from '../crypto/secret-box.js';
import type { Database } from '../db/database.js';
import { PaygateClient } from '../fiat/client.js';
import type { PaygateConfig } from '../fiat/config.js';
import type { App } from '../http/typed.js';
import type { ReferenceData } from '../reference/load.js';
import type { Wallet } from '../wallet/wallet.js';
import { executeCommand } from './command-target.js';
import { startOperatorEndpoint } from './loopback-server.js';

export interface OperatorServices {
  readonly db: Database;
  readonly reference: ReferenceData;
  readonly secretBox: SecretBox;
  readonly wallet: Wallet;
  readonly paygate: PaygateConfig;
  readonly dataDir: string;
}

/**
 * server.ts: on the embedded database (PGlite), which the operator tool cannot open while this
 * server holds it, the loopback operator endpoint that runs the tool's commands here, on this
 * server's database, wallet and gateway client (every command but `mail`, which needs no database);
 * stopped with the app. With PostgreSQL the tool opens the database itself, and no endpoint starts
 * (the nodes of a cluster may share DATA_DIR, where they raced on the endpoint's file).
 */
export async function startOperatorService(app: App, services: OperatorServices): Promise<void> {
  if (services.db.kind !== 'pglite') return;
  const gateway = new PaygateClient(services.paygate);
  const endpoint = await startOperatorEndpoint(services.dataDir, async (argv) => {
    try {
      return await executeCommand(argv, {
        db: services.db,
        reference: services.reference,
        secretBox: services.secretBox,
        wallet: services.wallet,
        gateway,
      });
    } catch (error) {
      app.log.error({ err: error, command: argv.slice(0, 2).join(' ') }, 'an operator command failed');
      throw error;
    }
  });
  app.addHook('onClose', () => endpoint.close());
  app.log.info({ operatorPort: endpoint.port }, 'operator endpoint on 127.0.0.1 (npm run admin)');
}
