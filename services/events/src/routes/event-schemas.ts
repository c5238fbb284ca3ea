/**
 * Schemas of the event routes: they validate requests, type the handlers and document the API
 * (OpenAPI at `/docs`). Limits come from the domain so code, checks and docs agree.
 */
import { Type } from 'typebox';
import { ACCESS_LEVELS, EVENT_ID_PATTERN, LIMITS } from '../domain/event.js';
import { CURSOR_MAX_LENGTH, PAGE_DEFAULTS } from '../domain/pagination.js';

export const EventIdParams = Type.Object({
  eventId: Type.String({
    // The pattern alone carries the length rule, so a long id gets one message naming the whole rule.
    pattern: EVENT_ID_PATTERN,
    description:
      'Chosen by the client: 1-64 characters of A-Z a-z 0-9 . _ ~ - (RFC 3986 unreserved), not "." or "..".',
    examples: ['spring-meetup-2026'],
  }),
});

const Access = Type.Enum([...ACCESS_LEVELS], {
  description: 'PUBLIC: everyone; PRIVATE: the creator and members (token claim, see README).',
});

export const EventBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: LIMITS.nameMaxLength }),
    body: Type.String({
      minLength: 1,
      maxLength: LIMITS.bodyMaxLength,
      description: 'Markdown, stored raw.',
    }),
    cover: Type.Optional(
      Type.String({ format: 'uri', maxLength: LIMITS.coverMaxLength, description: 'An http(s) URL.' }),
    ),
    date: Type.String({
      format: 'date-time',
      description: 'Full ISO 8601 date-time with a zone; returned as sent.',
      examples: ['2026-05-01T18:30:00+02:00'],
    }),
    access: Type.Optional(Access),
  },
  {
    additionalProperties: false,
    description: 'eventId, createdAt, createdBy and updatedAt are set by the server and refused here.',
  },
);

export const EventSchema = Type.Object({
  eventId: Type.String(),
  name: Type.String(),
  body: Type.String(),
  cover: Type.Optional(Type.String()),
  date: Type.String({ format: 'date-time' }),
  access: Access,
  createdAt: Type.String({ format: 'date-time' }),
  createdBy: Type.String({ description: 'The `sub` of the token that created the event.' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

const cursor = (description: string) =>
  Type.Optional(Type.String({ format: 'list-cursor', maxLength: CURSOR_MAX_LENGTH, description }));

export const ListQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: PAGE_DEFAULTS.maxPage, default: PAGE_DEFAULTS.page }),
  limit: Type.Integer({ minimum: 1, maximum: PAGE_DEFAULTS.maxLimit, default: PAGE_DEFAULTS.limit }),
  after: cursor(
    'Opaque cursor from the `next` target of a Link header: the page starts right after the event it ' +
      'names, and `page` only numbers the Link targets. Not together with `before`.',
  ),
  before: cursor(
    'Opaque cursor from the `prev` target of a Link header: the page ends right before the event it ' +
      'names, and `page` only numbers the Link targets. Not together with `after`.',
  ),
});

export const ErrorSchema = Type.Object(
  {
    statusCode: Type.Integer(),
    message: Type.Union([Type.String(), Type.Array(Type.String())]),
    error: Type.String(),
  },
  { description: 'NestJS-style error; message is an array for validation failures.' },
);

export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(Type.String({ description: 'ETag the event must still have (412 otherwise).' })),
});
