import { createServer } from 'node:http';
import { createTestDatabase } from '@platform/testkit/postgres';
import { seedEvents } from './bench/seed.js';
import { createPgClient } from './src/storage/pg-client.js';
import { call, featureSettings, hmacToken, openProductionStorage, startApp } from './test/helpers.js';

let count = 0;
const rs = createServer((q, s) => {
  q.resume();
  q.on('end', () => {
    count++;
    s.statusCode = 204;
    s.end();
  });
}).listen(0);
await new Promise((r) => rs.once('listening', r));
const port = (rs.address() as { port: number }).port;
const db = await createTestDatabase('prof');
const st = await openProductionStorage({ kind: 'postgres', url: db.url, poolMax: 10 });
const idle = await startApp({
  store: st.store,
  features: {
    sql: st.sql,
    settings: featureSettings({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_DISPATCH: 'false' }),
  },
});
const auth = await hmacToken('drain');
for (let i = 0; i < 10; i++)
  await call(idle, '/webhooks', {
    method: 'POST',
    token: auth,
    body: { url: `http://127.0.0.1:${port}/hook/${i}` },
  });
await idle.close();
const client = createPgClient({ url: db.url, poolMax: 1 });
await seedEvents(client, 2000);
await client.close();
const t0 = Date.now();
const app = await startApp({
  store: st.store,
  features: {
    sql: st.sql,
    settings: featureSettings({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_MS: '100' }),
    lockUrl: db.url,
  },
});
while (count < 18000) await new Promise((r) => setTimeout(r, 50));
console.log('drained 18000 in', Date.now() - t0, 'ms', process.cpuUsage());
await app.close();
await st.store.close();
await db.drop();
rs.close();
