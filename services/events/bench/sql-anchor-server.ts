/**
 * The bare-SQL anchor of the mix benchmark: a bare Fastify app running the service's own SQL
 * (`createEventStore`) through the same driver, with none of the service's work (no token checks,
 * schema validation, read cache, error mapping, per-id write queue). Reads answer like the service
 * for an anonymous caller (PRIVATE is 404); writes run the same read-then-compare-and-set SQL.
 * `DATABASE_URL` for PostgreSQL, else `PGLITE_DIR`.
 */
import Fastify from 'fastify';
import { toView } from '../src/domain/event.js';
import { atOffset } from '../src/domain/pagination.js';
import { createEventStore, type EventFields } from '../src/storage/event-store.js';
import { createPgClient } from '../src/storage/pg-client.js';
import { createPgliteClient } from '../src/storage/pglite-client.js';

const url = process.env.DATABASE_URL;
const store = createEventStore(
  url ? createPgClient({ url, poolMax: 10 }) : await createPgliteClient(process.env.PGLITE_DIR),
);
const JSON_TYPE = 'application/json; charset=utf-8';
const WRITER = 'bench-writer';

const app = Fastify({ logger: false });
app.get('/health', async () => ({ status: 'ok' }));
app.get<{ Params: { id: string } }>('/events/:id', async (request, reply) => {
  const event = await store.get(request.params.id);
  if (event === undefined || event.access === 'PRIVATE') return reply.code(404).send({ statusCode: 404 });
  return reply.type(JSON_TYPE).send(JSON.stringify(toView(event)));
});
app.get<{ Querystring: { page?: string; limit?: string } }>('/events', async (request, reply) => {
  const limit = Number(request.query.limit ?? 100);
  const page = Number(request.query.page ?? 1);
  const found = await store.list({ kind: 'public' }, atOffset((page - 1) * limit), limit);
  reply.header('x-total-count', String(found.total));
  return reply.type(JSON_TYPE).send(JSON.stringify(found.events.map(toView)));
});
app.put<{ Params: { id: string }; Body: Pick<EventFields, 'name' | 'body' | 'date'> }>(
  '/events/:id',
  async (request, reply) => {
    const fields: EventFields = { ...request.body, cover: null, access: 'PUBLIC' };
    const existing = await store.get(request.params.id);
    const written =
      existing === undefined
        ? await store.insert(request.params.id, fields, WRITER, new Date())
        : await store.replace(request.params.id, existing.revision, fields, new Date());
    return reply.code(existing === undefined ? 201 : 200).send(written && toView(written));
  },
);
app.delete<{ Params: { id: string } }>('/events/:id', async (request, reply) => {
  const existing = await store.get(request.params.id);
  if (existing === undefined) return reply.code(404).send({ statusCode: 404 });
  await store.remove(request.params.id, existing.revision);
  return reply.code(204).send();
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    app.close().then(() => process.exit(0));
  });
}
