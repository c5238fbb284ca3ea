/**
 * The benchmark's anchor: a bare Fastify app whose routes return constant JSON bodies read once from
 * `ANCHOR_BODIES` (a JSON file `{ "one": <event>, "list": [<events>] }`), serialised per request the
 * way any handler returning an object is. Nothing else: no database, no auth, no validation.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const file = process.env.ANCHOR_BODIES;
if (file === undefined) throw new Error('ANCHOR_BODIES is required');
const bodies = JSON.parse(readFileSync(file, 'utf8')) as { one: unknown; list: unknown };

const app = Fastify({ logger: false });
app.get('/health', async () => ({ status: 'ok' }));
app.get('/one', async () => bodies.one);
app.get('/list', async () => bodies.list);
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    app.close().then(() => process.exit(0));
  });
}
