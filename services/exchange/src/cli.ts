import { CliError, runCli, USAGE } from './cli/commands.js';
import { loadConfig } from './config.js';
import { resolveMasterKey } from './crypto/master-key.js';
import { createSecretBox } from './crypto/secret-box.js';
import { openStorage } from './db/open.js';
import { syncCurrencies } from './ledger/store.js';
import { loadReferenceData } from './reference/load.js';

/**
 * Operator tool: `npm run admin -w services/exchange -- <command>` (same settings as the server).
 * With the embedded database, stop the server first: one process at a time may open the PGlite directory.
 */
const argv = process.argv.slice(2);
if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help') {
  console.log(USAGE);
  process.exit(0);
}
const config = loadConfig();
const reference = loadReferenceData(config.referenceFile);
const db = await openStorage(config.storage).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(2);
});
let code = 1;
try {
  await syncCurrencies(db, reference);
  const secretBox = createSecretBox(resolveMasterKey(config.masterKey).key);
  code = await runCli(argv, {
    db,
    reference,
    secretBox,
    print: (value) =>
      console.log(JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2)),
  });
} catch (error) {
  if (!(error instanceof CliError) && !(error instanceof TypeError && 'code' in error)) throw error;
  console.error(error.message);
  code = 2;
} finally {
  await db.close();
}
process.exit(code);
