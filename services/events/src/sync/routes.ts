/**
 * `GET /events/sync`: incremental sync in Google Calendar's model. Without a token it answers every
 * event the caller may see, page by page (`next_page_token`), and on the last page a
 * `next_sync_token`; with `sync_token` only what changed since, in change order, with a tombstone
 * `{id, deleted: true}` for each event deleted or no longer visible to this caller. A token that
 * is malformed, made for another caller, or older than `SYNC_RETENTION` answers 410: start again.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { TokenVerifier } from '../auth/token-verifier.js';
import { readMarks } from '../changes/change-log.js';
import type { Viewer } from '../domain/access.js';
import { toView } from '../domain/event.js';
import { ApiError } from '../errors.js';
import { optionalTokenHook } from '../http/authenticate.js';
import { varyOn } from '../http/vary.js';
import { ErrorSchema, EventSchema } from '../routes/event-schemas.js';
import { scopeOf } from '../storage/event-store.js';
import type { SqlClient } from '../storage/sql-client.js';
import { createSyncStore } from './sync-store.js';
import {
  checkPosition,
  openToken,
  type SyncPosition,
  sealToken,
  TOKEN_MAX_LENGTH,
  type ViewerKey,
} from './sync-token.js';

export interface SyncRoutesOptions {
  sql: SqlClient;
  verifier: TokenVerifier;
  /** `SYNC_RETENTION`: seconds a token stays usable and changes stay in the log. */
  retentionSeconds: number;
  /** The key sealing tokens, shared by every instance (`events_keys`). */
  tokenKey: Buffer;
  now: () => Date;
}

/** `limit` of a sync page. */
export const SYNC_LIMITS = { defaultLimit: 100, maxLimit: 1_000 } as const;

const Tombstone = Type.Object(
  { id: Type.String(), deleted: Type.Literal(true) },
  { description: 'An event deleted, or no longer visible to this caller (made PRIVATE): drop it.' },
);

const SyncAnswer = Type.Object({
  items: Type.Array(Type.Union([EventSchema, Tombstone])),
  next_page_token: Type.Optional(Type.String({ description: 'Present while more pages follow.' })),
  next_sync_token: Type.Optional(
    Type.String({
      description: 'On the last page: send it as `sync_token` next time for what changed since.',
    }),
  ),
});

const tokenText = (description: string) =>
  // No length rule here: any token that is not ours (too long included) is a 410, not a 400.
  Type.Optional(Type.String({ description }));

const SyncQuery = Type.Object({
  limit: Type.Integer({
    minimum: 1,
    maximum: SYNC_LIMITS.maxLimit,
    default: SYNC_LIMITS.defaultLimit,
    description: 'Items per page, 1-1000.',
  }),
  page_token: tokenText(
    '`next_page_token` of the page before (with or without the `sync_token` it continues).',
  ),
  sync_token: tokenText(
    `\`next_sync_token\` of an earlier sync (at most ${TOKEN_MAX_LENGTH} characters; 410 when malformed, made for another caller, or older than SYNC_RETENTION).`,
  ),
});

/** One key per view a token may be made for: a member sees what every member sees. */
function viewerKeyOf(viewer: Viewer | null): ViewerKey {
  if (viewer === null) return 'a';
  return viewer.member ? 'm' : `u:${viewer.userId}`;
}

function gone(reason: string): ApiError {
  return new ApiError(
    'GONE',
    `Sync token not usable: ${reason}. Start a full sync (GET /events/sync without sync_token) and replace your copy`,
  );
}

function sendJson(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}

export const syncRoutes: FastifyPluginAsyncTypebox<SyncRoutesOptions> = async (app, options) => {
  const { sql, tokenKey, now, retentionSeconds } = options;
  const store = createSyncStore(sql);
  const optionalToken = optionalTokenHook(options.verifier);

  /** The position this request continues from, or a 410. */
  const positionOf = (
    query: { page_token?: string; sync_token?: string },
    head: bigint,
    viewer: ViewerKey,
    nowSeconds: number,
  ): SyncPosition => {
    const sync = query.sync_token === undefined ? undefined : openToken(query.sync_token, tokenKey);
    if (query.sync_token !== undefined && sync?.kind !== 'sync') throw gone('sync_token is malformed');
    if (query.page_token !== undefined) {
      const page = openToken(query.page_token, tokenKey);
      if (page === undefined || page.kind === 'sync') throw gone('page_token is malformed');
      // Repeating the sync token with its page token (as Google's clients do) is fine; another one is not.
      if (sync?.kind === 'sync' && !(page.kind === 'delta' && page.from === sync.seq)) {
        throw gone('page_token belongs to another sync than sync_token');
      }
      return page;
    }
    if (sync?.kind === 'sync') {
      return {
        kind: 'delta',
        from: sync.seq,
        upto: head,
        after: sync.seq,
        viewer: sync.viewer,
        issuedAt: sync.issuedAt,
      };
    }
    return { kind: 'full', upto: head, after: '', viewer, issuedAt: nowSeconds };
  };

  app.get(
    '/events/sync',
    {
      onRequest: optionalToken,
      schema: {
        summary: 'Incremental sync: every visible event, then only what changed (with tombstones)',
        description:
          'Without a token: every event the caller may see, `limit` per page, `next_page_token` to go on, ' +
          '`next_sync_token` on the last page. With `sync_token`: the changes since, in change order; an item is ' +
          'the event as GET /events/{eventId} answers it, or `{id, deleted: true}` for an event deleted or no ' +
          'longer visible to this caller. 410: the token is malformed, for another caller, or older than ' +
          'SYNC_RETENTION; start a full sync. A token is optional (anonymous: PUBLIC events).',
        security: [{}, { bearerAuth: [] }],
        querystring: SyncQuery,
        response: {
          200: SyncAnswer,
          400: ErrorSchema,
          401: ErrorSchema,
          410: ErrorSchema,
          414: ErrorSchema,
          500: ErrorSchema,
          503: ErrorSchema,
        },
      },
    },
    async (request, reply) => {
      const viewer = request.viewer;
      const scope = scopeOf(viewer);
      const key = viewerKeyOf(viewer);
      const nowSeconds = Math.floor(now().getTime() / 1000);
      const marks = await readMarks(sql);
      const position = positionOf(request.query, marks.head, key, nowSeconds);
      const check = checkPosition(position, {
        viewer: key,
        nowSeconds,
        retentionSeconds,
        pruned: marks.pruned,
      });
      if (!check.ok) throw gone(check.reason);
      const { limit } = request.query;
      const seal = (next: SyncPosition): string => sealToken(next, tokenKey);
      let items: string[];
      let tail: string;
      if (position.kind === 'full') {
        const page = await store.fullPage(scope, position.after, limit);
        items = page.events.map((event) => JSON.stringify(toView(event)));
        const last = page.events.at(-1);
        tail =
          page.more && last !== undefined
            ? `"next_page_token":${JSON.stringify(seal({ ...position, after: last.eventId, issuedAt: nowSeconds }))}`
            : `"next_sync_token":${JSON.stringify(seal({ kind: 'sync', seq: position.upto, viewer: key, issuedAt: nowSeconds }))}`;
      } else if (position.kind === 'delta') {
        const page = await store.deltaPage(scope, position, limit);
        items = page.items.map((item) =>
          item.kind === 'event'
            ? JSON.stringify(toView(item.event))
            : `{"id":${JSON.stringify(item.id)},"deleted":true}`,
        );
        tail = page.more
          ? `"next_page_token":${JSON.stringify(seal({ ...position, after: page.last, issuedAt: nowSeconds }))}`
          : `"next_sync_token":${JSON.stringify(seal({ kind: 'sync', seq: position.upto, viewer: key, issuedAt: nowSeconds }))}`;
      } else {
        throw gone('page_token is malformed');
      }
      varyOn(reply, 'Authorization');
      reply.header('cache-control', 'no-store');
      return sendJson(reply, `{"items":[${items.join(',')}],${tail}}`);
    },
  );
};
