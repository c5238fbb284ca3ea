import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { graphqlErrorBody } from '../errors.js';
import type { GraphQLHandler } from '../proxy/graphql-handler.js';

/**
 * POST /graphql on plain node:http, in front of Fastify (which serves every other route, and the
 * CORS preflight). A cache hit is the proxy's hot path: going through Fastify's routing, hooks,
 * content-type parsing and reply pipeline cost more than half of the throughput of a bare server,
 * so this path reads the body, asks the handler and writes the answer itself. Every answer is HTTP 200
 * with a GraphQL body, as the original's clients expect.
 */

export interface GraphQLListenerOptions {
  readonly handler: GraphQLHandler;
  readonly bodyLimitBytes: number;
  readonly corsOrigin: '*' | readonly string[];
  /** GRAPHQL_MODE, sent as `x-mode` on every answer (the original's clients read it). */
  readonly mode: string;
  readonly logger: Logger;
}

const EXPOSED =
  'x-cache, x-cache-key, x-cache-stale, x-upstream-status, x-queued, x-mode, x-mutation, x-queue-id, age, etag';

export function isGraphQLPost(request: IncomingMessage): boolean {
  return (
    request.method === 'POST' && (request.url === '/graphql' || request.url?.startsWith('/graphql?') === true)
  );
}

export function createGraphQLListener(
  options: GraphQLListenerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { handler, bodyLimitBytes, corsOrigin, mode, logger } = options;
  const allowed = corsOrigin === '*' ? undefined : new Set(corsOrigin);

  const send = (
    request: IncomingMessage,
    response: ServerResponse,
    headers: Record<string, string>,
    body: string | Buffer,
    status = 200,
  ) => {
    if (allowed === undefined) {
      response.setHeader('access-control-allow-origin', '*');
    } else {
      response.setHeader('vary', 'Origin');
      const origin = request.headers.origin;
      if (origin !== undefined && allowed.has(origin))
        response.setHeader('access-control-allow-origin', origin);
    }
    response.setHeader('access-control-expose-headers', EXPOSED);
    response.setHeader('x-mode', mode);
    for (const name in headers) response.setHeader(name, headers[name] as string);
    response.setHeader('content-type', 'application/json; charset=utf-8');
    response.setHeader('content-length', Buffer.byteLength(body));
    response.writeHead(status);
    response.end(body);
  };

  // 413 with a GraphQL body; the connection is closed so the rest of a huge body is not read.
  const tooLarge = (request: IncomingMessage, response: ServerResponse) => {
    send(
      request,
      response,
      { connection: 'close' },
      graphqlErrorBody('PAYLOAD_TOO_LARGE', `The body exceeds BODY_LIMIT_BYTES (${bodyLimitBytes} bytes)`),
      413,
    );
  };

  return (request, response) => {
    const contentType = request.headers['content-type'];
    if (contentType === undefined || !/^application\/(graphql-response\+)?json\b/i.test(contentType)) {
      request.resume();
      send(
        request,
        response,
        {},
        graphqlErrorBody('BAD_REQUEST', 'The content-type must be application/json'),
      );
      return;
    }
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > bodyLimitBytes) {
      request.resume();
      tooLarge(request, response);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    request.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > bodyLimitBytes) {
        // Answered at once; nothing more is kept in memory (chunked bodies have no content-length).
        refused = true;
        chunks.length = 0;
        tooLarge(request, response);
      } else chunks.push(chunk);
    });
    request.on('end', () => {
      if (refused) return;
      let body: unknown;
      try {
        body = JSON.parse(
          chunks.length === 1
            ? (chunks[0] as Buffer).toString('utf8')
            : Buffer.concat(chunks).toString('utf8'),
        );
      } catch {
        send(request, response, {}, graphqlErrorBody('BAD_REQUEST', 'The body is not valid JSON'));
        return;
      }
      const key = request.headers['idempotency-key'];
      handler
        .handle({
          body,
          authorization: request.headers.authorization,
          idempotencyKey: typeof key === 'string' ? key : undefined,
        })
        .then(
          (answer) => send(request, response, answer.headers, answer.body),
          (error: unknown) => {
            logger.error({ err: error }, 'POST /graphql failed');
            send(request, response, {}, graphqlErrorBody('INTERNAL_ERROR', 'Internal proxy error'));
          },
        );
    });
    request.on('error', () => response.destroy());
  };
}
