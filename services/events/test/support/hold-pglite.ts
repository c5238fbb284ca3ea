import { createPgliteClient } from '../../src/storage/pglite-client.js';

/** Opens the embedded database at argv[2] as the server does, says `ready` and holds it until killed. */
const db = await createPgliteClient(process.argv[2]);
await db.query('SELECT 1');
process.stdout.write('ready\n');
setInterval(() => {}, 1 << 30);
