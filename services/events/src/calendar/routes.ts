/**
 * Calendar feeds (RFC 5545): `GET /events.ics` (the PUBLIC events) and per-user feeds behind a
 * secret URL, created, listed and revoked by their owner. A feed streams page by page (bounded
 * memory whatever its size) and carries an `ETag` that changes with any change of the log, so a
 * calendar polling with `If-None-Match` gets 304 until something changed.
 */
import { createHmac } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import type { TokenVerifier } from '../auth/token-verifier.js';
import { readMarks } from '../changes/change-log.js';
import { notModified } from '../domain/access.js';
import { ApiError } from '../errors.js';
import { callerOf, requiredTokenHook } from '../http/authenticate.js';
import { ErrorSchema } from '../routes/event-schemas.js';
import type { SqlClient } from '../storage/sql-client.js';
import { type CalendarFeed, createFeedStore, type FeedScope, type RowKey } from './feed-store.js';
import { type CalendarLook, calendarWriter } from './ics.js';

export interface CalendarSettings extends CalendarLook {
  /** `CALENDAR_FEEDS_PER_USER`: feeds one user may hold. @default 20 */
  feedsPerUser: number;
}

export interface CalendarRoutesOptions {
  sql: SqlClient;
  verifier: TokenVerifier;
  settings: CalendarSettings;
  /** Shared key of the ETags (so they reveal nothing about the log). */
  etagKey: Buffer;
  /** `PUBLIC_URL`: the origin feed URLs start with; unset: the request's own. */
  publicUrl: string | undefined;
  basePath: string;
  now: () => Date;
}

/** Rows read per query while a feed streams. */
const PAGE_ROWS = 500;
/** Bumped when the text of a feed changes for the same data, so cached copies are not kept. */
const FORMAT_VERSION = 1;

const FeedIdParams = Type.Object({
  id: Type.String({
    pattern: '^cf_[A-Za-z0-9_-]{22}$',
    description: 'The id `POST /calendar-feeds` answered.',
  }),
});

const FeedBody = Type.Object(
  {
    include_private: Type.Optional(
      Type.Boolean({ description: "Also the caller's own PRIVATE events. @default false" }),
    ),
    from: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Only events whose `date` is at or after this instant.',
      }),
    ),
    to: Type.Optional(
      Type.String({ format: 'date-time', description: 'Only events whose `date` is before this instant.' }),
    ),
  },
  { additionalProperties: false },
);

const FeedSchema = Type.Object({
  id: Type.String(),
  include_private: Type.Boolean(),
  from: Type.Optional(Type.String({ format: 'date-time' })),
  to: Type.Optional(Type.String({ format: 'date-time' })),
  created_at: Type.String({ format: 'date-time' }),
});

const CreatedFeedSchema = Type.Object({
  ...FeedSchema.properties,
  url: Type.String({ description: 'The secret address of the feed (shown only in this answer).' }),
});

const calendarContent = {
  description: 'An iCalendar (RFC 5545) document.',
  content: { 'text/calendar': { schema: { type: 'string' } } },
};

const bearer: Record<string, string[]>[] = [{ bearerAuth: [] }];
const common = { 400: ErrorSchema, 401: ErrorSchema, 414: ErrorSchema, 500: ErrorSchema, 503: ErrorSchema };

function feedView(feed: CalendarFeed): Static<typeof FeedSchema> {
  return {
    id: feed.id,
    include_private: feed.includePrivate,
    ...(feed.from === null ? {} : { from: feed.from.toISOString() }),
    ...(feed.to === null ? {} : { to: feed.to.toISOString() }),
    created_at: feed.createdAt.toISOString(),
  };
}

const FEED_NOT_FOUND = 'Calendar feed not found';

export const calendarRoutes: FastifyPluginAsyncTypebox<CalendarRoutesOptions> = async (app, options) => {
  const { sql, settings, etagKey, basePath } = options;
  const feeds = createFeedStore(sql);
  const requiredToken = requiredTokenHook(options.verifier);

  /** Answers the feed of `scope` (`identity` names it in the ETag): 304, or the calendar streamed. */
  const sendFeed = async (
    request: FastifyRequest,
    reply: FastifyReply,
    scope: FeedScope,
    identity: string,
  ): Promise<FastifyReply> => {
    const { head } = await readMarks(sql);
    const tag = createHmac('sha256', etagKey)
      .update(`ics:${FORMAT_VERSION}:${identity}:${head}`)
      .digest('base64url')
      .slice(0, 27);
    const etag = `"${tag}"`;
    reply.header('etag', etag);
    reply.header('cache-control', 'no-cache');
    if (notModified(request.headers['if-none-match'], etag)) return reply.code(304).send();
    const writer = calendarWriter(settings);
    async function* text(): AsyncGenerator<string> {
      yield writer.header;
      let after: RowKey | null = null;
      for (;;) {
        const page: { rows: Parameters<typeof writer.events>[0]; last: RowKey | null } =
          await feeds.eventPage(scope, after, PAGE_ROWS);
        if (page.rows.length > 0) yield writer.events(page.rows);
        if (page.rows.length < PAGE_ROWS || page.last === null) break;
        after = page.last;
      }
      yield writer.footer;
    }
    return reply
      .type('text/calendar; charset=utf-8')
      .header('content-disposition', 'inline; filename="events.ics"')
      .send(Readable.from(text(), { objectMode: false }));
  };

  app.get(
    '/events.ics',
    {
      schema: {
        summary: 'The PUBLIC events as an iCalendar feed (RFC 5545), streamed; ETag and 304',
        response: {
          200: calendarContent,
          304: Type.Null(),
          414: ErrorSchema,
          500: ErrorSchema,
          503: ErrorSchema,
        },
      },
    },
    (request, reply) =>
      sendFeed(request, reply, { owner: null, includePrivate: false, from: null, to: null }, 'public'),
  );

  app.get(
    '/calendar-feeds/:token.ics',
    {
      schema: {
        summary: "A user's calendar feed at its secret address (no token needed: the address is the secret)",
        params: Type.Object({ token: Type.String({ description: 'The secret of the feed URL.' }) }),
        response: {
          200: calendarContent,
          304: Type.Null(),
          404: ErrorSchema,
          414: ErrorSchema,
          500: ErrorSchema,
          503: ErrorSchema,
        },
      },
    },
    async (request, reply) => {
      const feed = await feeds.byToken(request.params.token);
      if (feed === undefined) throw new ApiError('NOT_FOUND', FEED_NOT_FOUND);
      // The feed's own ETag space: a revoked feed's tags never match a new feed's.
      return sendFeed(request, reply, feed, `feed:${feed.id}`);
    },
  );

  app.post(
    '/calendar-feeds',
    {
      onRequest: requiredToken,
      schema: {
        summary: 'Create a secret calendar feed URL of the PUBLIC events (and your PRIVATE ones if asked)',
        description: `At most ${settings.feedsPerUser} feeds per user (CALENDAR_FEEDS_PER_USER), then 409. The URL is shown only here.`,
        security: bearer,
        body: FeedBody,
        response: { 201: CreatedFeedSchema, ...common, 409: ErrorSchema, 413: ErrorSchema, 415: ErrorSchema },
      },
    },
    async (request, reply) => {
      const viewer = callerOf(request);
      const from = request.body.from === undefined ? null : new Date(request.body.from);
      const to = request.body.to === undefined ? null : new Date(request.body.to);
      if (from !== null && to !== null && from.getTime() >= to.getTime()) {
        throw new ApiError('VALIDATION', ['from must be before to']);
      }
      const created = await feeds.create(
        viewer.userId,
        { includePrivate: request.body.include_private ?? false, from, to },
        options.now(),
        settings.feedsPerUser,
      );
      if (!created.ok) {
        throw new ApiError(
          'CONFLICT',
          `At most ${created.limit} calendar feeds per user: revoke one (DELETE /calendar-feeds/{id}) first`,
        );
      }
      const origin = options.publicUrl ?? `${request.protocol}://${request.host}`;
      reply.code(201);
      return { ...feedView(created.feed), url: `${origin}${basePath}/calendar-feeds/${created.token}.ics` };
    },
  );

  app.get(
    '/calendar-feeds',
    {
      onRequest: requiredToken,
      schema: {
        summary: "The caller's calendar feeds (without their secret URLs)",
        security: bearer,
        response: { 200: Type.Array(FeedSchema), ...common },
      },
    },
    async (request) => (await feeds.list(callerOf(request).userId)).map(feedView),
  );

  app.delete(
    '/calendar-feeds/:id',
    {
      onRequest: requiredToken,
      schema: {
        summary: 'Revoke a calendar feed: its URL answers 404 at once',
        security: bearer,
        params: FeedIdParams,
        response: { 204: Type.Null(), ...common, 404: ErrorSchema },
      },
    },
    async (request, reply) => {
      if (!(await feeds.remove(callerOf(request).userId, request.params.id))) {
        throw new ApiError('NOT_FOUND', FEED_NOT_FOUND);
      }
      return reply.code(204).send(null);
    },
  );
};
