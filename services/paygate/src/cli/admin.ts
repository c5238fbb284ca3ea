import { AdminError, runAdmin, USAGE } from '../admin/commands.js';
import { loadCatalog } from '../catalog/load.js';
import { loadConfig } from '../config.js';
import { openStorage } from '../db/open.js';

/**
 * Operator tool: `npm run admin -w services/paygate -- <command>` (the server's settings). With the
 * embedded database, stop the server first: one process at a time may open the PGlite directory.
 */
const argv = process.argv.slice(2);
if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help') {
  console.log(USAGE);
  process.exit(0);
}
const config = loadConfig();
const catalog = loadCatalog(config.catalogFile, config.merchantEnv);
const db = await openStorage(config.storage);
let code = 1;
try {
  code = await runAdmin(argv, {
    db,
    catalog,
    now: Date.now,
    print: (value) => console.log(JSON.stringify(value, null, 2)),
  });
} catch (error) {
  if (!(error instanceof AdminError)) throw error;
  console.error(error.message);
  code = 2;
} finally {
  await db.close();
}
process.exit(code);
