/**
 * The event API over HTTP on a real listener, backed by a throw-away PostgreSQL database with the
 * production wiring (read cache + NOTIFY feed), so every read-after-write below also checks the cache.
 */
import { Writable } from 'node:stream';
import { useTestDatabase } from '@platform/testkit/fixtures';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventView } from '../src/domain/event.js';
import { call, hmacToken, newId, openProductionStore, startApp, type TestApp, validBody } from './helpers.js';

const db = useTestDatabase('events_http');
let app: TestApp;
let alice: string;

beforeAll(async () => {
  app = await startApp({ store: await openProductionStore({ kind: 'postgres', url: db.url, poolMax: 4 }) });
  alice = await hmacToken('alice');
});
afterAll(async () => {
  await app.close();
  await app.store.close();
});

describe('PUT /events/{eventId}', () => {
  it('creates (201) with server-set fields, PUBLIC by default, ETag and Location', async () => {
    const id = newId();
    const { status, json, headers } = await call(app, `/events/${id}`, {
      method: 'PUT',
      token: alice,
      body: validBody,
    });
    expect(status).toBe(201);
    const event = json as EventView;
    expect(event).toMatchObject({ ...validBody, eventId: id, access: 'PUBLIC', createdBy: 'alice' });
    expect(Date.parse(event.createdAt)).not.toBeNaN();
    expect(event.updatedAt).toBe(event.createdAt);
    expect(headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    expect(headers.get('location')).toBe(`/events/${id}`);
    expect(headers.get('x-request-id')).toBeTruthy();
  });

  it('replaces (200) keeping createdAt/createdBy, dropping an omitted cover, with a new ETag', async () => {
    const id = newId();
    const first = await call(app, `/events/${id}`, { method: 'PUT', token: alice, body: validBody });
    const { cover: _omitted, ...withoutCover } = validBody;
    const second = await call(app, `/events/${id}`, {
      method: 'PUT',
      token: alice,
      body: { ...withoutCover, name: 'Renamed', access: 'PRIVATE' },
    });
    expect(second.status).toBe(200);
    const before = first.json as EventView;
    const after = second.json as EventView;
    expect(after).toMatchObject({ name: 'Renamed', access: 'PRIVATE', createdBy: 'alice' });
    expect(after.cover).toBeUndefined();
    expect(after.createdAt).toBe(before.createdAt);
    expect(Date.parse(after.updatedAt)).toBeGreaterThanOrEqual(Date.parse(before.updatedAt));
    expect(second.headers.get('etag')).not.toBe(first.headers.get('etag'));
  });

  it('honours If-Match: the current ETag replaces, a stale one is 412 and changes nothing', async () => {
    const id = newId();
    const created = await call(app, `/events/${id}`, { method: 'PUT', token: alice, body: validBody });
    const etag = created.headers.get('etag')!;
    const ok = await call(app, `/events/${id}`, {
      method: 'PUT',
      token: alice,
      body: { ...validBody, name: 'v2' },
      headers: { 'if-match': etag },
    });
    expect(ok.status).toBe(200);
    const stale = await call(app, `/events/${id}`, {
      method: 'PUT',
      token: alice,
      body: { ...validBody, name: 'v3' },
      headers: { 'if-match': etag },
    });
    expect(stale.status).toBe(412);
    expect(stale.json).toEqual({
      statusCode: 412,
      message: expect.any(String),
      error: 'Precondition Failed',
    });
    expect(((await call(app, `/events/${id}`)).json as EventView).name).toBe('v2');
  });

  it('If-None-Match: * creates only; If-Match on a missing event is 412', async () => {
    const id = newId();
    const put = (headers: Record<string, string>) =>
      call(app, `/events/${id}`, { method: 'PUT', token: alice, body: validBody, headers });
    expect((await put({ 'if-match': '*' })).status).toBe(412);
    expect((await call(app, `/events/${id}`)).status).toBe(404);
    expect((await put({ 'if-none-match': '*' })).status).toBe(201);
    expect((await put({ 'if-none-match': '*' })).status).toBe(412);
  });

  it('concurrent creates of one id: exactly one 201, the rest replace (200)', async () => {
    const id = newId();
    // More writers than a write's retry budget: they must queue, not spend attempts racing.
    const writers = 12;
    const results = await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        call(app, `/events/${id}`, { method: 'PUT', token: alice, body: { ...validBody, name: `w${i}` } }),
      ),
    );
    const statuses = results.map((result) => result.status).sort();
    expect(statuses).toEqual([...Array.from({ length: writers - 1 }, () => 200), 201]);
    // Every answer carries its own revision, and the stored event is the last writer's.
    const etags = new Set(results.map((result) => result.headers.get('etag')));
    expect(etags.size).toBe(writers);
    const stored = await call(app, `/events/${id}`);
    const last = results.find((result) => result.headers.get('etag') === stored.headers.get('etag'));
    expect((last?.json as EventView | undefined)?.name).toBe((stored.json as EventView).name);
  });
});

describe('GET /events/{eventId}', () => {
  it('reads without a token, with ETag; If-None-Match gives 304', async () => {
    const id = newId();
    await call(app, `/events/${id}`, { method: 'PUT', token: alice, body: validBody });
    const read = await call(app, `/events/${id}`);
    expect(read.status).toBe(200);
    expect((read.json as EventView).eventId).toBe(id);
    const etag = read.headers.get('etag')!;
    const again = await call(app, `/events/${id}`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('404 with the error body for an unknown event', async () => {
    const { status, json } = await call(app, `/events/${newId('nope')}`);
    expect(status).toBe(404);
    expect(json).toEqual({ statusCode: 404, message: 'Event not found', error: 'Not Found' });
  });
});

describe('DELETE /events/{eventId}', () => {
  it('204 without a body, then 404; a stale If-Match is 412', async () => {
    const id = newId();
    const created = await call(app, `/events/${id}`, { method: 'PUT', token: alice, body: validBody });
    await call(app, `/events/${id}`, { method: 'PUT', token: alice, body: { ...validBody, name: 'v2' } });
    const stale = await call(app, `/events/${id}`, {
      method: 'DELETE',
      token: alice,
      headers: { 'if-match': created.headers.get('etag')! },
    });
    expect(stale.status).toBe(412);
    const removed = await call(app, `/events/${id}`, { method: 'DELETE', token: alice });
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    expect((await call(app, `/events/${id}`)).status).toBe(404);
    expect((await call(app, `/events/${id}`, { method: 'DELETE', token: alice })).status).toBe(404);
  });
});

describe('GET /events', () => {
  it('pages in date order with X-Total-Count and Link; defaults page 1, limit 100', async () => {
    const tag = newId('page');
    for (let day = 5; day >= 1; day--) {
      await call(app, `/events/${tag}-${day}`, {
        method: 'PUT',
        token: alice,
        body: { ...validBody, date: `1990-01-0${day}T00:00:00Z` },
      });
    }
    const defaults = await call(app, '/events');
    expect(defaults.status).toBe(200);
    const total = Number(defaults.headers.get('x-total-count'));
    expect(total).toBeGreaterThanOrEqual(5);
    expect((defaults.json as EventView[]).length).toBe(Math.min(total, 100));
    // The 1990 events sort before every other test's events.
    const page2 = await call(app, '/events?page=2&limit=2');
    expect((page2.json as EventView[]).map((event) => event.eventId)).toEqual([`${tag}-3`, `${tag}-4`]);
    expect(page2.headers.get('x-total-count')).toBe(String(total));
    const link = page2.headers.get('link')!;
    // prev/next also carry cursors naming this page's first/last row (list.cursor.happy.test.ts).
    expect(link).toMatch(/<\/events\?page=1&limit=2&before=[A-Za-z0-9_-]+>; rel="prev"/);
    expect(link).toMatch(/<\/events\?page=3&limit=2&after=[A-Za-z0-9_-]+>; rel="next"/);
    expect(link).toContain('</events?page=1&limit=2>; rel="first"');
    expect(link).toContain(`</events?page=${Math.ceil(total / 2)}&limit=2>; rel="last"`);
  });
});

describe('health and docs', () => {
  it('GET /health is 200 and /docs serves the OpenAPI document', async () => {
    expect((await call(app, '/health')).status).toBe(200);
    const doc = await call(app, '/docs/json');
    expect(doc.status).toBe(200);
    const paths = (doc.json as { paths: Record<string, unknown> }).paths;
    expect(Object.keys(paths)).toEqual(expect.arrayContaining(['/events', '/events/{eventId}']));
  });

  it('writes the request id into every log line of the request', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
        done();
      },
    });
    const logged = await startApp({ store: app.store, logger: pino({ level: 'info' }, sink) });
    try {
      await call(logged, `/events/${newId('nope')}`, { headers: { 'x-request-id': 'req-42' } });
    } finally {
      await logged.close();
    }
    const mine = lines.filter((line) => line.reqId === 'req-42');
    expect(mine.map((line) => line.msg)).toEqual([
      'request refused',
      expect.stringMatching(/^GET \/events\/\S+ 404 /),
    ]);
    expect(mine[1]).toMatchObject({ method: 'GET', status: 404, durationMs: expect.any(Number) });
  });

  it('echoes a well-formed X-Request-Id and replaces a malformed one', async () => {
    const kept = await call(app, '/health', { headers: { 'x-request-id': 'trace-123' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-123');
    const replaced = await call(app, '/health', { headers: { 'x-request-id': 'bad id\twith spaces' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
