import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { QueueEvent, QueueEventHub } from '../queue/events.js';

const Query = Type.Object({
  /** Only these queue ids (comma-separated); absent: every mutation's events. */
  ids: Type.Optional(Type.String({ minLength: 1, maxLength: 10_000 })),
});

/** A comment line every 15 s keeps idle connections (and proxies between) from timing out. */
const KEEPALIVE_MS = 15_000;

/**
 * `GET /queue/events` (management, like `GET /queue/{id}`): server-sent events telling what became of
 * queued mutations, so a client learns without polling when its mutation was sent (`event: sent`,
 * with `upstreamStatus`; the answer itself is at `GET /queue/{id}`) or rejected. In a fleet every
 * instance streams every instance's events (they come through Redis pub/sub).
 */
export function queueEventRoutes(app: FastifyInstance, hub: QueueEventHub): void {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.get('/queue/events', { schema: { querystring: Query } }, async (request, reply) => {
    const wanted = request.query.ids
      ? new Set(request.query.ids.split(',').map((id) => id.trim()))
      : undefined;
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    raw.write(': queue events\n\n');
    const send = (event: QueueEvent) => {
      if (wanted && !wanted.has(event.id)) return;
      raw.write(`event: ${event.event}\ndata: ${JSON.stringify(event)}\n\n`);
    };
    const unsubscribe = hub.subscribe(send, () => raw.end());
    const keepalive = setInterval(() => raw.write(': keepalive\n\n'), KEEPALIVE_MS);
    keepalive.unref();
    request.raw.on('close', () => {
      clearInterval(keepalive);
      unsubscribe();
    });
  });
}
