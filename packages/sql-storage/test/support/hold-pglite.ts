import { openPglite } from '../../src/pglite.js';

/** Opens the embedded database at argv[2], says `ready` and holds it until killed. */
const db = await openPglite(process.argv[2]);
await db.query('CREATE TABLE IF NOT EXISTS t (n int)');
await db.query('INSERT INTO t VALUES (1)');
process.stdout.write('ready\n');
setInterval(() => {}, 1 << 30);
