import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { AnswerCache, PurgeSelector } from '../cache/answer-cache.js';
import { HttpError } from '../errors.js';

const PurgeBody = Type.Object(
  {
    key: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
    type: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    all: Type.Optional(Type.Literal(true)),
  },
  { additionalProperties: false },
);

/**
 * `POST /cache/purge` (management, behind ADMIN_TOKEN): removes cached answers by key (`{key}`), by
 * type (`{type: "Post"}`), by type and id (`{type: "Post", id: "cG9zdDox"}`: answers holding that
 * object) or everything (`{all: true}`); answers `{purged}`. The metrics are on the metrics listener
 * (`METRICS_PORT`, src/metrics.ts), not here.
 */
export function cacheRoutes(app: FastifyInstance, deps: { cache: AnswerCache }): void {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.post('/cache/purge', { schema: { body: PurgeBody } }, async (request) => {
    const { key, type, id, all } = request.body;
    let selector: PurgeSelector;
    if (all === true && key === undefined && type === undefined && id === undefined) {
      selector = { kind: 'all' };
    } else if (key !== undefined && type === undefined && id === undefined && all === undefined) {
      selector = { kind: 'key', key };
    } else if (type !== undefined && key === undefined && all === undefined) {
      selector = { kind: 'type', type, id };
    } else {
      throw new HttpError('BAD_REQUEST', 'Send one of {key}, {type}, {type, id} or {all: true}');
    }
    let purged: number;
    try {
      purged = await deps.cache.purgeBy(selector);
    } catch (error) {
      request.log.error({ err: error }, 'purge failed');
      throw new HttpError(
        'UPSTREAM_UNAVAILABLE',
        'The shared cache (Redis) is unavailable; nothing was purged',
      );
    }
    return { purged };
  });
}
