/**
 * The sync, calendar and webhook routes called as a stranger would (PGlite): no credentials, a bad
 * token, another user's ids, escaped and over-long paths, huge bodies and fields. Every refusal is
 * a clear 4xx in the service's error shape and leaves the database as it was; what one user may
 * hold is bounded (WEBHOOKS_PER_USER, CALENDAR_FEEDS_PER_USER).
 */
import { sendRaw } from '@platform/testkit/fuzz/send';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedStorage } from '../src/storage/open-store.js';
import { call, featureSettings, hmacToken, openPgliteStorage, startApp, type TestApp } from './helpers.js';

let storage: OpenedStorage;
let app: TestApp;
let alice: string;
let mallory: string;
let hook: { id: string };
let feed: { id: string; url: string };

const TABLES = [
  'webhook_subscriptions',
  'webhook_deliveries',
  'calendar_feeds',
  'event_changes',
  'events',
  'event_log_marks',
];

async function digest(): Promise<string> {
  const parts: string[] = [];
  for (const table of TABLES) {
    const rows = await storage.sql.query<{ d: string | null }>(
      `SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS d FROM ${table} t`,
    );
    parts.push(`${table}:${rows[0]?.d}`);
  }
  return parts.join(' ');
}

beforeAll(async () => {
  storage = await openPgliteStorage();
  app = await startApp({
    store: storage.store,
    bodyLimitBytes: 16 * 1024,
    features: {
      sql: storage.sql,
      settings: featureSettings({
        WEBHOOK_DISPATCH: 'false',
        WEBHOOKS_PER_USER: '2',
        CALENDAR_FEEDS_PER_USER: '2',
      }),
    },
  });
  alice = await hmacToken('alice');
  mallory = await hmacToken('mallory');
  hook = (
    await call(app, '/webhooks', {
      method: 'POST',
      token: alice,
      body: { url: 'https://receiver.example/a' },
    })
  ).json as { id: string };
  feed = (await call(app, '/calendar-feeds', { method: 'POST', token: alice, body: {} })).json as typeof feed;
});
afterAll(async () => {
  await app?.close();
  await storage?.store.close();
});

interface Case {
  method: string;
  path: string;
  token?: string;
  body?: unknown;
  rawBody?: string;
  status: number;
  /** Part of the message. */
  says?: string;
}

async function expectRefused(cases: readonly Case[]): Promise<void> {
  for (const c of cases) {
    const before = await digest();
    // Sent raw: fetch would resolve `%2e%2e` segments before sending.
    const text = c.rawBody ?? (c.body === undefined ? undefined : JSON.stringify(c.body));
    const headers: [string, string][] = [['accept', 'application/json']];
    if (c.token) headers.push(['authorization', `Bearer ${c.token}`]);
    if (text !== undefined) headers.push(['content-type', 'application/json']);
    // No body at all, as curl -XPOST sends it (node would send an empty chunked one).
    else if (c.method === 'POST') headers.push(['content-length', '0']);
    const raw = await sendRaw(app.url, {
      method: c.method,
      target: c.path,
      headers,
      ...(text === undefined ? {} : { body: Buffer.from(text) }),
      mutation: 'none',
    });
    const answer = {
      status: raw.status,
      text: raw.text,
      json: JSON.parse(raw.text || 'null') as unknown,
      headers: new Headers(Object.entries(raw.headers).map(([k, v]) => [k, String(v)])),
    };
    const label = `${c.method} ${c.path.slice(0, 80)}`;
    expect(answer.status, `${label}: ${answer.text.slice(0, 200)}`).toBe(c.status);
    const body = answer.json as Record<string, unknown>;
    expect(Object.keys(body ?? {}).sort(), label).toEqual(['error', 'message', 'statusCode']);
    expect(body.statusCode, label).toBe(c.status);
    if (c.says) expect(JSON.stringify(body.message), label).toContain(c.says);
    expect(answer.headers.get('x-request-id'), label).toBeTruthy();
    if (c.status === 401)
      expect(answer.headers.get('www-authenticate'), label).toMatch(/^Bearer realm="events"/);
    expect(await digest(), `${label} changed the state`).toBe(before);
  }
}

describe('strangers', () => {
  it('without credentials or with a bad token: 401 on every owned route', async () => {
    const owned: [string, string][] = [
      ['POST', '/webhooks'],
      ['GET', '/webhooks'],
      ['GET', `/webhooks/${hook.id}`],
      ['DELETE', `/webhooks/${hook.id}`],
      ['POST', `/webhooks/${hook.id}/rotate-secret`],
      ['POST', `/webhooks/${hook.id}/test`],
      ['GET', `/webhooks/${hook.id}/deliveries`],
      ['POST', '/calendar-feeds'],
      ['GET', '/calendar-feeds'],
      ['DELETE', `/calendar-feeds/${feed.id}`],
    ];
    const forged = await hmacToken('alice', { secret: 'another-secret-that-is-at-least-32-bytes' });
    await expectRefused(
      owned.flatMap(([method, path]) => [
        { method, path, status: 401, ...(method === 'POST' ? { body: {} } : {}) },
        { method, path, token: 'not.a.jwt', status: 401 },
        { method, path, token: forged, status: 401 },
      ]),
    );
    // A token is optional on the sync and the public feed, but an invalid one is still a 401.
    await expectRefused([{ method: 'GET', path: '/events/sync', token: 'not.a.jwt', status: 401 }]);
  });

  it("another user's subscription or feed does not exist for them", async () => {
    await expectRefused([
      { method: 'GET', path: `/webhooks/${hook.id}`, token: mallory, status: 404, says: 'not found' },
      { method: 'DELETE', path: `/webhooks/${hook.id}`, token: mallory, status: 404 },
      { method: 'POST', path: `/webhooks/${hook.id}/rotate-secret`, token: mallory, status: 404 },
      { method: 'POST', path: `/webhooks/${hook.id}/test`, token: mallory, status: 404 },
      { method: 'GET', path: `/webhooks/${hook.id}/deliveries`, token: mallory, status: 404 },
      { method: 'DELETE', path: `/calendar-feeds/${feed.id}`, token: mallory, status: 404 },
    ]);
    expect((await call(app, '/webhooks', { token: mallory })).json).toEqual([]);
    expect((await call(app, '/calendar-feeds', { token: mallory })).json).toEqual([]);
    // Guessed feed secrets: 404, the same answer as a revoked one.
    await expectRefused([
      {
        method: 'GET',
        path: `/calendar-feeds/${'A'.repeat(43)}.ics`,
        status: 404,
        says: 'Calendar feed not found',
      },
      { method: 'GET', path: `/calendar-feeds/${feed.id}.ics`, status: 404 },
      { method: 'GET', path: '/calendar-feeds/.ics', status: 404 },
    ]);
  });

  it('escaped, malformed and over-long paths and fields: clear 4xx, nothing changed', async () => {
    await expectRefused([
      {
        method: 'GET',
        path: '/webhooks/%2e%2e',
        token: alice,
        status: 400,
        says: 'id has an invalid format',
      },
      { method: 'DELETE', path: '/webhooks/..%2fwebhooks', token: alice, status: 400 },
      { method: 'POST', path: `/webhooks/${hook.id}%00/test`, token: alice, status: 400 },
      { method: 'DELETE', path: '/calendar-feeds/%2e%2e', token: alice, status: 400 },
      { method: 'GET', path: '/calendar-feeds/%2e%2e%2f%2e%2e.ics', status: 404 },
      { method: 'GET', path: `/webhooks/${'w'.repeat(600)}`, token: alice, status: 414 },
      { method: 'GET', path: `/calendar-feeds/${'a'.repeat(600)}.ics`, status: 414 },
      { method: 'GET', path: `/webhooks/${hook.id}/deliveries?limit=101`, token: alice, status: 400 },
      { method: 'GET', path: `/webhooks/${hook.id}/deliveries?limit=0`, token: alice, status: 400 },
      { method: 'GET', path: `/events/sync?sync_token=${'a'.repeat(5_000)}`, status: 410 },
      { method: 'GET', path: `/events/sync?page_token=${'%00'.repeat(100)}`, status: 410 },
      // Bodies: huge, unknown fields, wrong types, bad URLs, private targets.
      {
        method: 'POST',
        path: '/webhooks',
        token: alice,
        rawBody: JSON.stringify({ url: 'x'.repeat(20_000) }),
        status: 413,
      },
      {
        method: 'POST',
        path: '/webhooks',
        token: alice,
        body: { url: `https://x.example/${'a'.repeat(3_000)}` },
        status: 400,
        says: 'at most 2048',
      },
      {
        method: 'POST',
        path: '/webhooks',
        token: alice,
        body: { url: 'https://x.example/', types: Array(1000).fill('event.created') },
        status: 400,
      },
      {
        method: 'POST',
        path: '/webhooks',
        token: alice,
        body: { url: 'https://x.example/', types: ['event.exploded'] },
        status: 400,
      },
      {
        method: 'POST',
        path: '/webhooks',
        token: alice,
        body: { url: 'https://x.example/', types: [] },
        status: 400,
      },
      {
        method: 'POST',
        path: '/webhooks',
        token: alice,
        body: { url: 'https://x.example/', secret: 'whsec_mine' },
        status: 400,
        says: 'should not exist',
      },
      { method: 'POST', path: '/webhooks', token: alice, body: { url: 'javascript:alert(1)' }, status: 400 },
      {
        method: 'POST',
        path: '/webhooks',
        token: alice,
        body: { url: 'http://127.0.0.1:9300/metrics' },
        status: 400,
        says: 'private address',
      },
      { method: 'POST', path: '/webhooks', token: alice, body: {}, status: 400, says: 'url is required' },
      { method: 'POST', path: '/webhooks', token: alice, rawBody: '{"url":', status: 400 },
      {
        method: 'POST',
        path: '/calendar-feeds',
        token: alice,
        body: { from: '2026-13-01T00:00:00Z' },
        status: 400,
      },
      { method: 'POST', path: '/calendar-feeds', token: alice, body: [], status: 400 },
    ]);
  });

  it('bounds what one user may hold: subscriptions and feeds (409 past the bound)', async () => {
    const dana = await hmacToken('dana');
    for (let i = 0; i < 2; i++) {
      expect(
        (
          await call(app, '/webhooks', {
            method: 'POST',
            token: dana,
            body: { url: `https://r.example/${i}` },
          })
        ).status,
      ).toBe(201);
      expect((await call(app, '/calendar-feeds', { method: 'POST', token: dana, body: {} })).status).toBe(
        201,
      );
    }
    await expectRefused([
      {
        method: 'POST',
        path: '/webhooks',
        token: dana,
        body: { url: 'https://r.example/3' },
        status: 409,
        says: 'At most 2',
      },
      { method: 'POST', path: '/calendar-feeds', token: dana, body: {}, status: 409, says: 'At most 2' },
    ]);
    // Others are not affected.
    expect(
      (await call(app, '/webhooks', { method: 'POST', token: mallory, body: { url: 'https://r.example/m' } }))
        .status,
    ).toBe(201);
  });

  it('problem details on request, for the new routes too', async () => {
    const answer = await call(app, `/webhooks/${hook.id}`, {
      token: mallory,
      headers: { accept: 'application/problem+json' },
    });
    expect(answer.status).toBe(404);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(answer.json).toMatchObject({ type: 'about:blank', status: 404, title: 'Not Found' });
    const gone = await call(app, '/events/sync?sync_token=x', {
      headers: { accept: 'application/problem+json' },
    });
    expect(gone.json).toMatchObject({ status: 410, title: 'Gone' });
  });
});
