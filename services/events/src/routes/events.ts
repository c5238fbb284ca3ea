/**
 * `/events` routes (spec part A): list, read, create-or-replace, delete. Reads then writes with a
 * compare-and-set on the revision; a write that loses a race is decided again on the new row.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { TokenVerifier } from '../auth/token-verifier.js';
import {
  canRead,
  type Denial,
  decideDelete,
  decidePut,
  notModified,
  parseEntityTags,
} from '../domain/access.js';
import { etagOf, RESERVED_EVENT_IDS, type StoredEvent, toView } from '../domain/event.js';
import { decodeCursor, type ListPosition, linkHeader, offsetOf } from '../domain/pagination.js';
import { ApiError, MESSAGES } from '../errors.js';
import { callerOf, optionalTokenHook, requiredTokenHook } from '../http/authenticate.js';
import { varyOn } from '../http/vary.js';
import { type EventFields, type EventPage, type EventStore, scopeOf } from '../storage/event-store.js';
import {
  ErrorSchema,
  EventBody,
  EventIdParams,
  EventSchema,
  IfMatchHeaders,
  ListQuery,
} from './event-schemas.js';
import { createPerKeyQueue } from './per-key-queue.js';

export interface EventRoutesOptions {
  store: EventStore;
  verifier: TokenVerifier;
  now: () => Date;
  /** `BASE_PATH`, used in `Location` and `Link` targets. */
  basePath: string;
}

/**
 * Sends an already serialised JSON body. The typed reply of the route only accepts the schema's
 * object shape, so this takes the untyped base reply.
 */
function sendJson(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}

/**
 * A write re-decides at most this many times when writers in other processes keep winning, then
 * answers 409. Writers in this process queue per event id (`PerKeyQueue`) and never race each other.
 */
const WRITE_ATTEMPTS = 5;

function denied(denial: Denial): ApiError {
  switch (denial) {
    case 'NOT_FOUND':
      return new ApiError('NOT_FOUND', MESSAGES.eventNotFound);
    case 'FORBIDDEN':
      return new ApiError('FORBIDDEN', MESSAGES.notCreator);
    case 'PRECONDITION_FAILED':
      return new ApiError('PRECONDITION_FAILED', MESSAGES.preconditionFailed);
  }
}

/**
 * The position a list request names: a cursor when one is sent (it decides the rows), otherwise the
 * page number. The schema has already checked each cursor's format; sending both is refused here.
 */
function positionOf(query: { page: number; limit: number; after?: string; before?: string }): ListPosition {
  const { after, before } = query;
  if (after !== undefined && before !== undefined) {
    throw new ApiError('VALIDATION', ['after and before must not be sent together']);
  }
  const name = after !== undefined ? 'after' : before !== undefined ? 'before' : undefined;
  const cursor = after ?? before;
  if (name === undefined || cursor === undefined) return { kind: 'offset', offset: offsetOf(query) };
  const decoded = decodeCursor(cursor);
  if (!decoded.ok) throw new ApiError('VALIDATION', [`${name} ${decoded.problem}`]);
  return { kind: name, key: decoded.key };
}

/** Statuses every route can answer: bad input, bad token, too long a URL, failure, shutting down. */
const common = { 400: ErrorSchema, 401: ErrorSchema, 414: ErrorSchema, 500: ErrorSchema, 503: ErrorSchema };
const bearer: Record<string, string[]>[] = [{ bearerAuth: [] }];
/** A token is optional on reads (`{}` is the OpenAPI way to say "no credentials also accepted"). */
const optionalBearer: Record<string, string[]>[] = [{}, { bearerAuth: [] }];

export const eventRoutes: FastifyPluginAsyncTypebox<EventRoutesOptions> = async (app, options) => {
  const { store, verifier, now, basePath } = options;
  const writes = createPerKeyQueue();
  // Authentication runs first (onRequest), so an anonymous caller learns nothing from validation.
  const optionalToken = optionalTokenHook(verifier);
  const requiredToken = requiredTokenHook(verifier);
  // JSON of a stored answer, kept as long as that answer object lives (the read cache hands out the
  // same object until a change), so repeated reads skip serialisation. The shape is `toView`'s,
  // which the response schemas document.
  const pageJson = new WeakMap<EventPage, string>();
  const eventJson = new WeakMap<StoredEvent, string>();
  const serialisePage = (page: EventPage): string => {
    let json = pageJson.get(page);
    if (json === undefined) {
      json = JSON.stringify(page.events.map(toView));
      pageJson.set(page, json);
    }
    return json;
  };
  const serialiseEvent = (event: StoredEvent): string => {
    let json = eventJson.get(event);
    if (json === undefined) {
      json = JSON.stringify(toView(event));
      eventJson.set(event, json);
    }
    return json;
  };

  app.get(
    '/events',
    {
      onRequest: optionalToken,
      schema: {
        summary: 'List events visible to the caller, ordered by date then eventId',
        description:
          'Totals in X-Total-Count; Link has first/prev/next/last. `next`/`prev` carry an `after`/`before` ' +
          'cursor, so following them costs the same at any depth and, under concurrent writes, neither ' +
          'skips nor repeats an event. A token is optional.',
        security: optionalBearer,
        querystring: ListQuery,
        response: { 200: Type.Array(EventSchema), ...common },
      },
    },
    async (request, reply) => {
      const viewer = request.viewer;
      const { page, limit } = request.query;
      const position = positionOf(request.query);
      const found = await store.list(scopeOf(viewer), position, limit);
      reply.header('x-total-count', String(found.total));
      reply.header('link', linkHeader(`${basePath}/events`, { page, limit, position }, found));
      varyOn(reply, 'Authorization');
      return sendJson(reply, serialisePage(found));
    },
  );

  app.get(
    '/events/:eventId',
    {
      onRequest: optionalToken,
      schema: {
        summary: 'Read one event (PRIVATE ones only for their creator and members)',
        security: optionalBearer,
        params: EventIdParams,
        response: { 200: EventSchema, 304: Type.Null(), ...common, 404: ErrorSchema },
      },
    },
    async (request, reply) => {
      const viewer = request.viewer;
      const event = await store.get(request.params.eventId);
      if (event === undefined || !canRead(event, viewer)) throw denied('NOT_FOUND');
      const etag = etagOf(event);
      reply.header('etag', etag);
      varyOn(reply, 'Authorization');
      if (notModified(request.headers['if-none-match'], etag)) return reply.code(304).send(null);
      return sendJson(reply, serialiseEvent(event));
    },
  );

  app.put(
    '/events/:eventId',
    {
      onRequest: requiredToken,
      schema: {
        summary: 'Create (201) or replace (200) an event; only its creator may replace it',
        security: bearer,
        params: EventIdParams,
        headers: Type.Object({
          ...IfMatchHeaders.properties,
          'if-none-match': Type.Optional(
            Type.String({ description: '`*`: create only (412 if it exists).' }),
          ),
        }),
        body: EventBody,
        response: {
          200: EventSchema,
          201: EventSchema,
          ...common,
          403: ErrorSchema,
          404: ErrorSchema,
          409: ErrorSchema,
          412: ErrorSchema,
          413: ErrorSchema,
          415: ErrorSchema,
        },
      },
    },
    async (request, reply) => {
      const viewer = callerOf(request);
      const { eventId } = request.params;
      if (RESERVED_EVENT_IDS.includes(eventId)) {
        throw new ApiError('VALIDATION', [
          `eventId "${eventId}" is reserved: GET /events/${eventId} is another route`,
        ]);
      }
      const input = request.body;
      const fields: EventFields = {
        name: input.name,
        body: input.body,
        cover: input.cover ?? null,
        date: input.date,
        access: input.access ?? 'PUBLIC',
      };
      const preconditions = {
        ifMatch: parseEntityTags(request.headers['if-match']),
        ifNoneMatch: parseEntityTags(request.headers['if-none-match']),
      };
      return writes.run(eventId, async () => {
        for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
          const existing = await store.get(eventId);
          const decision = decidePut(existing, viewer, preconditions, etagOf);
          if (!decision.ok) throw denied(decision.denial);
          const written =
            decision.action === 'create'
              ? await store.insert(eventId, fields, viewer.userId, now())
              : await store.replace(eventId, decision.revision, fields, now());
          if (written === undefined) continue; // another process got there first: decide again
          reply.header('etag', etagOf(written));
          if (decision.action === 'create') {
            reply.code(201).header('location', `${basePath}/events/${eventId}`);
          }
          return toView(written);
        }
        throw new ApiError('CONFLICT', 'The event is being changed concurrently; retry the request');
      });
    },
  );

  app.delete(
    '/events/:eventId',
    {
      onRequest: requiredToken,
      schema: {
        summary: 'Delete an event; only its creator may',
        security: bearer,
        params: EventIdParams,
        headers: IfMatchHeaders,
        response: {
          204: Type.Null(),
          ...common,
          403: ErrorSchema,
          404: ErrorSchema,
          409: ErrorSchema,
          412: ErrorSchema,
        },
      },
    },
    async (request, reply) => {
      const viewer = callerOf(request);
      const preconditions = { ifMatch: parseEntityTags(request.headers['if-match']) };
      const { eventId } = request.params;
      return writes.run(eventId, async () => {
        for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
          const existing = await store.get(eventId);
          const decision = decideDelete(existing, viewer, preconditions, etagOf);
          if (!decision.ok) throw denied(decision.denial);
          if (await store.remove(eventId, decision.revision)) return reply.code(204).send(null);
        }
        throw new ApiError('CONFLICT', 'The event is being changed concurrently; retry the request');
      });
    },
  );
};
