/**
 * The benchmark's anchor: a bare Fastify app whose routes return constant JSON bodies read once from
 * `ANCHOR_BODIES` (a JSON file `{ "one": <event>, "list": [<events>] }`). The bodies are serialised
 * once at start-up and sent as constant strings: the cheapest a Fastify JSON route can be, so the
 * ratios are not flattered by the anchor re-serialising per request. No database, auth or validation.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const file = process.env.ANCHOR_BODIES;
if (file === undefined) throw new Error('ANCHOR_BODIES is required');
const bodies = JSON.parse(readFileSync(file, 'utf8')) as { one: unknown; list: unknown };
const one = JSON.stringify(bodies.one);
const list = JSON.stringify(bodies.list);
const JSON_TYPE = 'application/json; charset=utf-8';

const app = Fastify({ logger: false });
app.get('/health', async () => ({ status: 'ok' }));
app.get('/one', async (_request, reply) => reply.type(JSON_TYPE).send(one));
app.get('/list', async (_request, reply) => reply.type(JSON_TYPE).send(list));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    app.close().then(() => process.exit(0));
  });
}
