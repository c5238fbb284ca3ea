import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { graphqlErrorBody } from '../errors.js';
import type { ProxyMetrics } from '../metrics.js';
import type { GraphQLHandler, ProxyAnswer } from '../proxy/graphql-handler.js';
import type { RecalledQuery } from '../proxy/request-memo.js';

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
  readonly metrics: ProxyMetrics;
  readonly logger: Logger;
  /**
   * Called once per answer as it is written (status, seconds since the request reached the
   * listener), for the per-route metrics; unset with METRICS_PORT=off. A call from the one place
   * every answer passes, rather than a `finish` listener per response: `once` cost the hit path
   * about 3 us of CPU per request (a wrapper, a listener added and removed).
   */
  readonly answered?: (method: string, status: number, seconds: number) => void;
}

/** How much of a refused (413) body is read and discarded before the connection is cut. */
const DRAIN_LIMIT_BYTES = 8 * 1_048_576;
/** How long a connection cut for an endless refused body stays open, unread, for its answer to be read. */
const LINGER_MS = 1_000;

const EXPOSED =
  'x-cache, x-cache-key, x-cache-stale, x-upstream-status, x-queued, x-mode, x-mutation, x-queue-id, age, etag';

/** POST /graphql, and GET /graphql?query=... (queries only, GraphQL over HTTP). */
export function isGraphQLRequest(request: IncomingMessage): boolean {
  if (request.method !== 'POST' && request.method !== 'GET') return false;
  return request.url === '/graphql' || request.url?.startsWith('/graphql?') === true;
}

/** The GraphQL request carried by GET parameters: `query`, `operationName`, JSON `variables` and `extensions`. */
function fromSearchParams(url: string): Record<string, unknown> | string {
  const params = new URL(url, 'http://proxy.invalid').searchParams;
  const body: Record<string, unknown> = {};
  const query = params.get('query');
  if (query !== null) body['query'] = query;
  const operationName = params.get('operationName');
  if (operationName !== null && operationName !== '') body['operationName'] = operationName;
  for (const name of ['variables', 'extensions']) {
    const raw = params.get(name);
    if (raw === null || raw === '') continue;
    try {
      body[name] = JSON.parse(raw);
    } catch {
      return `The "${name}" parameter is not valid JSON`;
    }
  }
  return body;
}

export function createGraphQLListener(
  options: GraphQLListenerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { handler, bodyLimitBytes, corsOrigin, mode, metrics, logger, answered } = options;
  const allowed = corsOrigin === '*' ? undefined : new Set(corsOrigin);

  // Headers go to writeHead as one flat array: setHeader per header (its map, its checks) was a
  // measurable share of a cache hit. The list is kept on the answer (`head`) when it depends on the
  // answer alone (CORS_ORIGIN=*): a fresh hit's answer is handed out again (proxy/hit-answer.ts).
  const headList = (request: IncomingMessage, answer: ProxyAnswer): string[] => {
    if (allowed === undefined && answer.head !== undefined) return answer.head;
    const { headers, body } = answer;
    const raw: string[] = ['access-control-expose-headers', EXPOSED, 'x-mode', mode];
    if (allowed === undefined) {
      raw.push('access-control-allow-origin', '*');
    } else {
      raw.push('vary', 'Origin');
      const origin = request.headers.origin;
      if (origin !== undefined && allowed.has(origin)) raw.push('access-control-allow-origin', origin);
    }
    for (const name in headers) raw.push(name, headers[name] as string);
    raw.push(
      'content-type',
      'application/json; charset=utf-8',
      'content-length',
      String(Buffer.byteLength(body)),
    );
    if (allowed === undefined) answer.head = raw;
    return raw;
  };

  const send = (request: IncomingMessage, response: ServerResponse, started: number, answer: ProxyAnswer) => {
    const status = answer.status ?? 200;
    // RFC 9110 section 13.1.2: a matching If-None-Match on a cacheable answer is 304 without a body.
    const etag = answer.headers['etag'];
    const ifNoneMatch = request.headers['if-none-match'];
    if (status === 200 && etag !== undefined && ifNoneMatch !== undefined) {
      const tags = ifNoneMatch.split(',').map((tag) => tag.trim());
      if (tags.includes(etag) || tags.includes('*')) {
        metrics.notModified += 1;
        // The answer's header list without its content type and length (the last two pairs).
        response.writeHead(304, headList(request, answer).slice(0, -4));
        response.end();
        answered?.(request.method ?? 'POST', 304, (performance.now() - started) / 1000);
        return;
      }
    }
    response.writeHead(status, headList(request, answer));
    response.end(answer.body);
    answered?.(request.method ?? 'POST', status, (performance.now() - started) / 1000);
  };

  /** An answer made here (a refusal of the transport): no cache headers. */
  const fail = (
    request: IncomingMessage,
    response: ServerResponse,
    started: number,
    body: string,
    status = 200,
    headers: Record<string, string> = {},
  ) => send(request, response, started, { headers, body, status });

  const reply = (
    request: IncomingMessage,
    response: ServerResponse,
    started: number,
    pending: Promise<ProxyAnswer>,
    method: 'GET' | 'POST',
  ) => {
    pending.then(
      (result: ProxyAnswer) => send(request, response, started, result),
      (error: unknown) => {
        logger.error({ err: error }, `${method} /graphql failed`);
        fail(request, response, started, graphqlErrorBody('INTERNAL_ERROR', 'Internal proxy error'));
      },
    );
  };

  const answer = (
    request: IncomingMessage,
    response: ServerResponse,
    started: number,
    body: unknown,
    method: 'GET' | 'POST',
    text?: string,
  ) => {
    const key = request.headers['idempotency-key'];
    const pending = handler.handle({
      body,
      authorization: request.headers.authorization,
      idempotencyKey: typeof key === 'string' ? key : undefined,
      method,
      ...(text === undefined ? {} : { text }),
    });
    reply(request, response, started, pending, method);
  };

  // The exact-bytes fast path (proxy/request-memo.ts): a body whose text is a query seen before is
  // not parsed or checked again; a fresh hit in memory is then written without a promise.
  const answerRecalled = (
    request: IncomingMessage,
    response: ServerResponse,
    started: number,
    recalled: RecalledQuery,
  ) => {
    const authorization = request.headers.authorization;
    let hit: ProxyAnswer | undefined;
    try {
      hit = handler.hitNow(recalled, authorization);
    } catch (error) {
      reply(request, response, started, Promise.reject(error), 'POST');
      return;
    }
    if (hit !== undefined) send(request, response, started, hit);
    else reply(request, response, started, handler.handleRecalled(recalled, authorization), 'POST');
  };

  // 413 with a GraphQL body. The rest of the body is read and thrown away rather than the connection
  // closed at once: a client still writing a body would get EPIPE/ECONNRESET instead of the answer
  // (the kernel resets a socket closed with unread data). Past DRAIN_LIMIT_BYTES of discarded body
  // the connection is cut, so a client cannot make the proxy read an endless body.
  const tooLarge = (
    request: IncomingMessage,
    response: ServerResponse,
    started: number,
    declared: number,
  ) => {
    // A declared body longer than what would be drained is not worth reading: closed after the answer.
    const hopeless = declared > DRAIN_LIMIT_BYTES;
    let discarded = 0;
    request.removeAllListeners('data');
    request.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded <= DRAIN_LIMIT_BYTES) return;
      // Reading stops here (the client's writes then block on TCP flow control, at no cost to us),
      // but the socket is closed only LINGER_MS later: closed at once with the client's data unread,
      // the kernel resets it, and a client that had not yet read the answer (a loaded machine) lost
      // it to the reset (it saw ECONNRESET and no 413).
      request.removeAllListeners('data');
      request.pause();
      request.socket.pause();
      setTimeout(() => request.socket.destroy(), LINGER_MS).unref();
    });
    request.resume();
    fail(
      request,
      response,
      started,
      graphqlErrorBody('PAYLOAD_TOO_LARGE', `The body exceeds BODY_LIMIT_BYTES (${bodyLimitBytes} bytes)`),
      413,
      hopeless ? { connection: 'close' } : {},
    );
  };

  return (request, response) => {
    // Only read with metrics on (`answered`): no clock read per request otherwise.
    const started = answered === undefined ? 0 : performance.now();
    if (request.method === 'GET') {
      request.resume();
      const body = fromSearchParams(request.url ?? '/graphql');
      if (typeof body === 'string') fail(request, response, started, graphqlErrorBody('BAD_REQUEST', body));
      else answer(request, response, started, body, 'GET');
      return;
    }
    const contentType = request.headers['content-type'];
    if (contentType === undefined || !/^application\/(graphql-response\+)?json\b/i.test(contentType)) {
      request.resume();
      fail(
        request,
        response,
        started,
        graphqlErrorBody('BAD_REQUEST', 'The content-type must be application/json'),
      );
      return;
    }
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > bodyLimitBytes) {
      tooLarge(request, response, started, declared);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > bodyLimitBytes) {
        // Answered at once; nothing more is kept in memory (chunked bodies have no content-length).
        refused = true;
        chunks.length = 0;
        tooLarge(request, response, started, 0);
      } else chunks.push(chunk);
    });
    request.on('end', () => {
      if (refused) return;
      const text =
        chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8');
      const recalled = handler.recall(text);
      if (recalled !== undefined) {
        answerRecalled(request, response, started, recalled);
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        fail(request, response, started, graphqlErrorBody('BAD_REQUEST', 'The body is not valid JSON'));
        return;
      }
      answer(request, response, started, body, 'POST', text);
    });
    request.on('error', () => response.destroy());
  };
}
