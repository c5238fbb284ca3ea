import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { renderLandingPage } from '@platform/http-edge/landing-page';
import type { Logger } from '@platform/logging/logger';
import { logNodeRequest } from '@platform/logging/request-line';
import type { Health } from '../health/health.js';
import type { RateLimitService } from '../limiter/service.js';
import { JsonRequestError, parseJsonRequest, responseToJson } from '../proto/json.js';
import { Code } from '../proto/messages.js';

/**
 * The HTTP 1.1 server (reference "HTTP"): `/json` (any method) takes the protobuf-JSON form of a
 * RateLimitRequest and answers 200 / 429 / 500 by overall code; 400 for an empty or malformed body
 * and for call errors, with the reference's status and text type but saying what is wrong
 * (`Bad Request: <reason>`; the reference's `http.Error` body carries only the status text, which
 * left a typo such as `descriptor` unexplained). `GET /healthcheck` is 200 `OK` or 500; another
 * method there is 405 with `allow`.
 * Plain node:http: two routes do not need a framework, and it keeps the hot path short.
 */
export interface HttpServerParts {
  service: RateLimitService;
  health: Health;
  logger: Logger;
  /** Largest accepted body. @default 1 MiB */
  maxBodyBytes?: number;
}

/** `/`: where to go next (the landing page of every service). */
const LANDING_PAGE = renderLandingPage({
  title: 'ratelimit',
  summary:
    "A rate-limit decision service wire-compatible with Envoy's v3 rate-limit protocol (gRPC, and POST /json here).",
  links: [
    { label: 'Health', href: '/healthcheck' },
    { label: 'POST /json', href: '/json', note: 'a ShouldRateLimit request as protobuf JSON' },
  ],
});

function send(res: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    // Go's http.Error, which the reference answers errors with, sets this too.
    ...(status >= 400 ? { 'x-content-type-options': 'nosniff' } : {}),
  });
  res.end(body);
}

function readBody(req: IncomingMessage, max: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        resolve(undefined);
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(size > max ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

async function handleJson(req: IncomingMessage, res: ServerResponse, parts: HttpServerParts): Promise<void> {
  const body = await readBody(req, parts.maxBodyBytes ?? 1 << 20);
  if (body === undefined) return send(res, 413, 'Payload Too Large\n');
  if (body.trim() === '')
    return send(res, 400, 'Bad Request: empty body (expected a JSON RateLimitRequest)\n');
  let request: ReturnType<typeof parseJsonRequest>;
  try {
    request = parseJsonRequest(body);
  } catch (error) {
    if (error instanceof JsonRequestError) {
      parts.logger.debug({ reason: error.message }, 'bad /json request');
      return send(res, 400, `Bad Request: ${error.message}\n`);
    }
    throw error;
  }
  const result = await parts.service.shouldRateLimit(request);
  if (!result.ok) {
    parts.logger.warn(`error: ${result.error.message}`);
    return send(res, 400, `Bad Request: ${result.error.message}\n`);
  }
  const response = result.response;
  const status =
    response.overallCode === Code.OVER_LIMIT ? 429 : response.overallCode === Code.OK ? 200 : 500;
  for (const h of response.responseHeadersToAdd) res.setHeader(h.key, h.value);
  send(res, status, responseToJson(response), 'application/json');
}

export function createHttpServer(parts: HttpServerParts): Server {
  return createServer((req, res) => {
    logNodeRequest(parts.logger, req, res);
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/json') {
      handleJson(req, res, parts).catch((error: unknown) => {
        parts.logger.error({ err: error }, '/json failed');
        if (!res.headersSent) send(res, 500, 'Internal Server Error\n');
        else res.destroy();
      });
      return;
    }
    if (path === '/' && (req.method === 'GET' || req.method === 'HEAD')) {
      req.resume();
      return send(res, 200, LANDING_PAGE, 'text/html; charset=utf-8');
    }
    if (path === '/healthcheck') {
      req.resume();
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('allow', 'GET, HEAD');
        return send(res, 405, 'Method Not Allowed\n');
      }
      if (parts.health.healthy()) return send(res, 200, 'OK');
      return send(res, 500, `unhealthy: ${parts.health.failing().join(', ')}`);
    }
    req.resume();
    send(res, 404, 'Not Found\n');
  });
}

export function listenHttp(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/** Stops accepting, waits for in-flight requests (bounded), closes idle keep-alive connections. */
export function closeHttp(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      clearInterval(sweeper);
      server.closeAllConnections();
      resolve();
    }, graceMs);
    // Keep-alive connections become idle as their in-flight requests finish: close them as they do.
    const sweeper = setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearTimeout(timer);
      clearInterval(sweeper);
      resolve();
    });
    server.closeIdleConnections();
  });
}
