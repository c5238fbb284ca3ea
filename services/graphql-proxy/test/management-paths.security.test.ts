/**
 * Issue 41: escaped paths passed the management guards. The guard and the CORS check read the raw
 * `request.url` while the router matches the decoded path, so `GET /%71ueue` answered the queue
 * without the admin token, and a page at another origin got it with `access-control-allow-origin: *`.
 * Every management route, taken from the app's own route table (a new route is covered without
 * editing this file), is asked in many spellings (support/path-variants.ts) over a real socket, the
 * request target sent exactly as written: each spelling either reaches the route and meets its guard,
 * or is a 404 like any unknown path; never the route's answer.
 */
import http from 'node:http';
import { listenOnFreePort, type RunningApp } from '@platform/testkit/app';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type ProxyApp, type RegisteredRoute } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { pathVariants } from './support/path-variants.js';
import { tempDir } from './support/processes.js';

const ADMIN_TOKEN = 'admin-secret-for-tests';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const EVIL = 'https://evil.example';

/** The routes meant for anyone; every other route of the table must be a guarded management route. */
const PUBLIC = new Set([
  'OPTIONS *', // the CORS plugin's preflight
  'GET /',
  'HEAD /',
  'GET /health',
  'HEAD /health',
  'GET /health/live',
  'HEAD /health/live',
  'GET /health/ready',
  'HEAD /health/ready',
]);

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
}

/** A request with its target as written (node:http does not normalise it); an event stream is cut at its headers. */
function send(
  base: string,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: target,
        agent: false,
        headers: {
          host: url.host,
          ...(body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
          ...headers,
        },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        if (String(response.headers['content-type']).startsWith('text/event-stream')) {
          resolve({ status, headers: response.headers, text: '(event stream)' });
          response.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status, headers: response.headers, text: Buffer.concat(chunks).toString() }),
        );
        response.on('error', reject);
      },
    );
    request.setTimeout(10_000, () => request.destroy(new Error(`${method} ${target}: no answer in 10 s`)));
    request.on('error', reject);
    request.end(body);
  });
}

const NOT_ROUTED = JSON.stringify({ statusCode: 404, message: 'Route not found', error: 'Not Found' });

interface Probe {
  readonly route: RegisteredRoute;
  readonly method: string;
  readonly label: string;
  readonly target: string;
  readonly body?: string;
}

interface Proxy {
  readonly app: ProxyApp;
  readonly running: RunningApp;
  readonly queueId: string;
  remove(): Promise<void>;
}

/** A SETMODE proxy whose upstream is not there, holding one queued mutation. */
async function startProxy(env: Record<string, string>): Promise<Proxy> {
  const dir = await tempDir('proxy-paths');
  const app = await buildApp(
    loadConfig(
      {
        UPSTREAM_GRAPHQL_ENDPOINT: 'http://127.0.0.1:9/graphql',
        GRAPHQL_MODE: 'SETMODE',
        PATHS_BASE_DIR: dir.path,
        ...env,
      },
      dir.path,
    ),
    pino({ level: 'silent' }),
  );
  const running = await listenOnFreePort(app.fastify);
  const queued = await fetch(`${running.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'mutation { createPost(input: {title: "secret draft"}) { post { id } } }',
    }),
  });
  const queueId = queued.headers.get('x-queue-id');
  if (queueId === null) throw new Error(`the mutation was not queued: ${await queued.text()}`);
  return {
    app,
    running,
    queueId,
    async remove() {
      await app.close();
      await dir.remove();
    },
  };
}

/** Every management route of the table, as the route's own path and in every other spelling. */
function probes(proxy: Proxy): Probe[] {
  const management = proxy.app.routes.filter((route) => !PUBLIC.has(`${route.method} ${route.url}`));
  return management.flatMap((route) => {
    const path = route.url.replace(/:[A-Za-z]+/g, proxy.queueId);
    const body = route.method === 'POST' ? '{"all":true}' : undefined;
    return [{ label: 'as registered', target: path }, ...pathVariants(path)].map((variant) => ({
      route,
      method: route.method,
      ...variant,
      ...(body === undefined ? {} : { body }),
    }));
  });
}

/**
 * The answer of a guard, or of a spelling the router did not take to any route: 404, or for a
 * preflight the CORS plugin's catch-all 204 (checked to be a path no route takes: a method no
 * route has answers 404 there, not 405).
 */
async function refusedOrUnrouted(
  base: string,
  probe: Probe,
  answer: Answer,
  refusal: 401 | 403,
): Promise<boolean> {
  if (answer.status === refusal) return true;
  // (a HEAD answer has no body to tell)
  if (answer.status === 404) return answer.text === NOT_ROUTED || probe.method === 'HEAD';
  if (probe.method !== 'OPTIONS' || answer.status !== 204) return false;
  return (await send(base, 'PATCH', probe.target)).text === NOT_ROUTED;
}

/** The issue's hostile requests, as it lists them. */
const issueRequests = (queueId: string): ReadonlyArray<readonly [string, string, string?]> => [
  ['GET', '/%71ueue'],
  ['GET', '/%6cocal/data'],
  ['POST', '/%63ache/purge', '{"all":true}'],
  ['POST', '/%66lush', '{}'],
  ['GET', '/%71ueue/events'],
  ['GET', `/%71ueue/${queueId}`],
];

/** A page's request: `Origin`, and for a preflight the method it asks about. */
const browser = (probe: Probe): Record<string, string> =>
  probe.method === 'OPTIONS' ? { origin: EVIL, 'access-control-request-method': 'POST' } : { origin: EVIL };

const describeProbe = (probe: Probe, answer: Answer) =>
  `${probe.method} ${probe.target} (${probe.route.method} ${probe.route.url}, ${probe.label}): ${answer.status} ${answer.text.slice(0, 120)}`;

describe('with ADMIN_TOKEN: every spelling of every management route needs the token', () => {
  let proxy: Proxy;
  beforeAll(async () => {
    proxy = await startProxy({ ADMIN_TOKEN });
  });
  afterAll(() => proxy?.remove());

  it('the route table has the management routes this test expects to find (it is not empty)', () => {
    const urls = new Set(
      proxy.app.routes.filter((r) => !PUBLIC.has(`${r.method} ${r.url}`)).map((r) => r.url),
    );
    for (const url of [
      '/queue',
      '/queue/events',
      '/queue/:id',
      '/queue/:id/retry',
      '/flush',
      '/local/sync',
      '/local/data',
      '/cache/purge',
    ])
      expect(urls).toContain(url);
  });

  it('answers 401 (or 404 for a spelling no route takes), never the route, never with CORS headers', async () => {
    const failures: string[] = [];
    let routed = 0;
    for (const probe of probes(proxy)) {
      const answer = await send(proxy.running.url, probe.method, probe.target, browser(probe), probe.body);
      if (!(await refusedOrUnrouted(proxy.running.url, probe, answer, 401)))
        failures.push(describeProbe(probe, answer));
      if (answer.status === 401) {
        routed += 1;
        if (answer.headers['access-control-allow-origin'] !== undefined)
          failures.push(`CORS: ${describeProbe(probe, answer)}`);
        if (probe.method !== 'HEAD')
          expect(JSON.parse(answer.text)).toEqual({
            statusCode: 401,
            message: 'The management API requires Authorization: Bearer <ADMIN_TOKEN>',
            error: 'Unauthorized',
          });
      }
    }
    expect(failures).toEqual([]);
    // Escaped spellings did reach the routes (so the 401s above are the guard's, not luck).
    expect(routed).toBeGreaterThan(proxy.app.routes.length);
    // Nothing changed: the queued mutation is still queued.
    const queue = await send(proxy.running.url, 'GET', '/queue', ADMIN);
    expect(JSON.parse(queue.text).mutations.map((m: { id: string }) => m.id)).toEqual([proxy.queueId]);
  });

  it("refuses issue 41's requests verbatim", async () => {
    for (const [method, target, body] of issueRequests(proxy.queueId)) {
      const answer = await send(proxy.running.url, method, target, {}, body);
      expect([target, answer.status]).toEqual([target, 401]);
    }
  });

  it('serves the escaped spellings with the token, as the router takes them to the routes', async () => {
    expect(JSON.parse((await send(proxy.running.url, 'GET', '/%71ueue', ADMIN)).text).mutations).toHaveLength(
      1,
    );
    expect((await send(proxy.running.url, 'GET', `/%71ueue/${proxy.queueId}`, ADMIN)).status).toBe(200);
    expect((await send(proxy.running.url, 'GET', '/%71ueue/events', ADMIN)).text).toBe('(event stream)');
  });

  it('answers the public GET /metrics 404 as documented (the metrics listener serves it), not 401', async () => {
    for (const target of ['/metrics', '/%6detrics']) {
      const answer = await send(proxy.running.url, 'GET', target);
      expect([target, answer.status, answer.text]).toEqual([target, 404, NOT_ROUTED]);
    }
  });
});

describe('without ADMIN_TOKEN: every spelling meets the browser and Host guards', () => {
  let proxy: Proxy;
  beforeAll(async () => {
    proxy = await startProxy({});
  });
  afterAll(() => proxy?.remove());

  it('answers 403 (or 404 for a spelling no route takes) to a page, a cross-site fetch and a rebound Host', async () => {
    const failures: string[] = [];
    for (const probe of probes(proxy)) {
      for (const headers of [
        browser(probe),
        { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' },
        { host: 'evil.example' },
      ]) {
        const answer = await send(proxy.running.url, probe.method, probe.target, headers, probe.body);
        if (!(await refusedOrUnrouted(proxy.running.url, probe, answer, 403)))
          failures.push(`${JSON.stringify(headers)} ${describeProbe(probe, answer)}`);
        if (answer.status === 403 && answer.headers['access-control-allow-origin'] !== undefined)
          failures.push(`CORS: ${describeProbe(probe, answer)}`);
      }
    }
    expect(failures).toEqual([]);
    const queue = await send(proxy.running.url, 'GET', '/queue');
    expect(JSON.parse(queue.text).mutations).toHaveLength(1);
  });

  it("refuses issue 41's page at another origin verbatim, without access-control-allow-origin", async () => {
    for (const [method, target, body] of issueRequests(proxy.queueId)) {
      const answer = await send(proxy.running.url, method, target, { origin: EVIL }, body);
      expect([target, answer.status, answer.headers['access-control-allow-origin']]).toEqual([
        target,
        403,
        undefined,
      ]);
    }
    // A local script (no Origin, loopback Host) is still served, in any spelling the router takes.
    expect((await send(proxy.running.url, 'GET', '/%71ueue')).status).toBe(200);
    // The GraphQL endpoint's and /health's CORS are unchanged.
    const health = await send(proxy.running.url, 'GET', '/health', { origin: EVIL });
    expect(health.headers['access-control-allow-origin']).toBe('*');
  });
});
