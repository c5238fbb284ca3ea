/**
 * The proxy's HTTP routes as an OpenAPI 3 document, written from the README's endpoint table (the
 * proxy publishes none: POST /graphql is served on plain node:http, not by Fastify), so that the
 * testkit's OpenAPI fuzzer can generate its requests like those of the other services.
 */
import type { OpenApiDocument, Schema } from '@platform/testkit/fuzz/openapi';

/** Management errors: `{statusCode, message, error}` (README, "Endpoints"). */
export const HttpErrorShape: Schema = {
  type: 'object',
  required: ['statusCode', 'message', 'error'],
  properties: { statusCode: { type: 'integer' }, message: { type: 'string' }, error: { type: 'string' } },
};

/** Errors on /graphql: a GraphQL body with `errors[].extensions.code`. */
const GraphQLErrorShape: Schema = {
  type: 'object',
  required: ['errors'],
  properties: {
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['message', 'extensions'],
        properties: {
          message: { type: 'string' },
          extensions: { type: 'object', required: ['code'], properties: { code: { type: 'string' } } },
        },
        additionalProperties: true,
      },
    },
  },
  additionalProperties: true,
};

const json = (schema: Schema) => ({ content: { 'application/json': { schema } } });
const managementErrors = { '4XX': json(HttpErrorShape) };
const admin = [{ adminBearer: [] }];
const queueId = {
  in: 'path' as const,
  name: 'id',
  required: true,
  schema: { type: 'string', minLength: 1, maxLength: 100 },
};

const GraphQLRequest: Schema = {
  type: 'object',
  required: ['query'],
  properties: {
    query: { type: 'string' },
    variables: { type: 'object', additionalProperties: {} },
    operationName: { type: 'string' },
    extensions: { type: 'object', additionalProperties: {} },
  },
};

export const proxyDocument: OpenApiDocument = {
  openapi: '3.0.3',
  paths: {
    '/health': { get: { responses: { '200': json({ type: 'object' }) } } },
    '/graphql': {
      post: {
        requestBody: { required: true, content: { 'application/json': { schema: GraphQLRequest } } },
        responses: { '200': json({ type: 'object' }), '4XX': json(GraphQLErrorShape) },
      },
      get: {
        parameters: [
          { in: 'query', name: 'query', required: true, schema: { type: 'string' } },
          { in: 'query', name: 'variables', required: false, schema: { type: 'string' } },
          { in: 'query', name: 'operationName', required: false, schema: { type: 'string' } },
          { in: 'query', name: 'extensions', required: false, schema: { type: 'string' } },
        ],
        responses: { '200': json({ type: 'object' }), '4XX': json(GraphQLErrorShape) },
      },
    },
    '/cache/purge': {
      post: {
        security: admin,
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                additionalProperties: false,
                properties: {
                  key: { type: 'string', pattern: '^[0-9a-f]{64}$' },
                  type: { type: 'string', minLength: 1, maxLength: 200 },
                  id: { type: 'string', minLength: 1, maxLength: 500 },
                  all: { enum: [true] },
                },
              },
            },
          },
        },
        responses: { '200': json({ type: 'object' }), ...managementErrors },
      },
    },
    '/queue': {
      get: { security: admin, responses: { '200': json({ type: 'object' }), ...managementErrors } },
    },
    '/queue/{id}': {
      get: {
        security: admin,
        parameters: [queueId],
        responses: { '200': json({ type: 'object' }), ...managementErrors },
      },
      delete: {
        security: admin,
        parameters: [queueId],
        responses: { '200': json({ type: 'object' }), ...managementErrors },
      },
    },
    '/queue/{id}/retry': {
      post: {
        security: admin,
        parameters: [queueId],
        responses: { '200': json({ type: 'object' }), ...managementErrors },
      },
    },
    '/flush': {
      post: { security: admin, responses: { '200': json({ type: 'object' }), ...managementErrors } },
    },
    '/local/sync': {
      post: { security: admin, responses: { '200': json({ type: 'object' }), ...managementErrors } },
    },
    '/local/data': {
      get: { security: admin, responses: { '200': json({ type: 'object' }), ...managementErrors } },
    },
  },
};
