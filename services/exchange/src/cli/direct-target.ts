import type { Config } from '../config.js';
import { resolveMasterKey } from '../crypto/master-key.js';
import { createSecretBox } from '../crypto/secret-box.js';
import { openStorage } from '../db/open.js';
import { PaygateClient } from '../fiat/client.js';
import { syncCurrencies } from '../ledger/store.js';
import type { ReferenceData } from '../reference/load.js';
import { createWallet } from '../wallet/setup.js';
import type { Wallet } from '../wallet/wallet.js';
import { type CommandTarget, executeCommand } from './command-target.js';

/**
 * Commands run in the tool's own process on the database it opens: PostgreSQL (also while servers
 * run), or the embedded database when no server holds it. Answers the refusal to print (exit code
 * 2) when the database cannot be opened, e.g. an embedded one held by a process that is no server
 * of this version.
 */
export async function openDirectTarget(
  config: Pick<Config, 'storage' | 'masterKey' | 'wallet' | 'paygate'>,
  reference: ReferenceData,
): Promise<CommandTarget | { readonly refusal: string }> {
  let db: Awaited<ReturnType<typeof openStorage>>;
  try {
    db = await openStorage(config.storage);
  } catch (error) {
    return { refusal: error instanceof Error ? error.message : String(error) };
  }
  try {
    await syncCurrencies(db, reference);
  } catch (error) {
    await db.close();
    throw error;
  }
  const secretBox = createSecretBox(resolveMasterKey(config.masterKey).key);
  // Only the deposit commands need the wallet (and, for a node custody, its node); only `fiat` the gateway.
  let wallet: Wallet | undefined;
  return {
    async run(argv) {
      if (argv[0] === 'deposit') wallet ??= await createWallet({ db, reference, config: config.wallet });
      return executeCommand(argv, {
        db,
        reference,
        secretBox,
        ...(wallet ? { wallet } : {}),
        ...(argv[0] === 'fiat' ? { gateway: new PaygateClient(config.paygate) } : {}),
      });
    },
    close: () => db.close(),
  };
}
