/**
 * Calendar feeds on PostgreSQL with two instances: `GET /events.ics` and secret per-user feeds,
 * parsed back with ical.js (Mozilla) with every RFC 5545 field the issue names checked, the raw
 * text checked for CRLF and 75-octet folding that never splits a UTF-8 character, ETag and 304,
 * SEQUENCE and LAST-MODIFIED moving with a change, windows and PRIVATE events, and a revoked feed
 * answering 404 at once on the other instance.
 */
import { useTestDatabase } from '@platform/testkit/fixtures';
import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedStorage } from '../src/storage/open-store.js';
import {
  call,
  featureSettings,
  hmacToken,
  newId,
  openProductionStorage,
  startApp,
  type TestApp,
  validBody,
} from './helpers.js';

const db = useTestDatabase('events_ics');
let a: TestApp;
let b: TestApp;
const storages: OpenedStorage[] = [];
let alice: string;
let bob: string;

async function appOn(storage: OpenedStorage, env: Record<string, string> = {}): Promise<TestApp> {
  return startApp({
    store: storage.store,
    features: { sql: storage.sql, settings: featureSettings({ WEBHOOK_DISPATCH: 'false', ...env }) },
  });
}

beforeAll(async () => {
  for (let i = 0; i < 2; i++)
    storages.push(await openProductionStorage({ kind: 'postgres', url: db.url, poolMax: 4 }));
  a = await appOn(storages[0]!);
  b = await appOn(storages[1]!);
  alice = await hmacToken('alice');
  bob = await hmacToken('bob');
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  for (const storage of storages) await storage.store.close();
});

async function put(app: TestApp, token: string, id: string, fields: Record<string, unknown>): Promise<void> {
  const answer = await call(app, `/events/${id}`, {
    method: 'PUT',
    token,
    body: { ...validBody, ...fields },
  });
  expect(answer.status, answer.text).toBeLessThan(300);
}

/** The raw feed and its VEVENTs by SUMMARY-independent UID prefix (the event id). */
async function feed(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  const text = await response.text();
  return { response, text };
}

function parse(text: string) {
  const calendar = new ICAL.Component(ICAL.parse(text));
  const events = new Map<string, InstanceType<typeof ICAL.Component>>();
  for (const vevent of calendar.getAllSubcomponents('vevent')) {
    const uid = String(vevent.getFirstPropertyValue('uid'));
    events.set(uid.slice(0, uid.lastIndexOf('-')), vevent);
  }
  return { calendar, events };
}

/** RFC 5545 3.1: CRLF line ends, at most 75 octets a line, continuation lines start with a space. */
function expectWellFolded(text: string): void {
  expect(text.endsWith('\r\n')).toBe(true);
  expect(text.replaceAll('\r\n', '')).not.toMatch(/[\r\n]/);
  const bytes = Buffer.from(text, 'utf8');
  let start = 0;
  for (let i = 0; i < bytes.length - 1; i++) {
    if (bytes[i] !== 0x0d || bytes[i + 1] !== 0x0a) continue;
    const line = bytes.subarray(start, i);
    expect(line.length, line.toString()).toBeLessThanOrEqual(75);
    // Each physical line is valid UTF-8 on its own: no character was split by the fold.
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(line)).not.toThrow();
    start = i + 2;
  }
}

describe('GET /events.ics', () => {
  it('is RFC 5545: every field checked with ical.js, escaping, a 200-character UTF-8 summary folded correctly', async () => {
    const id = newId('ics');
    const hidden = newId('ics-private');
    const summary = `${'Zürich €'.repeat(20)}${'😀'.repeat(20)}`.slice(0, 200);
    expect([...summary].length).toBeLessThanOrEqual(200);
    const description = 'Doors at six, talks; then\\pizza\nsecond line\r\nthird, line';
    await put(a, alice, id, { name: summary, body: description, date: '2026-07-01T18:30:00+02:00' });
    await put(b, alice, hidden, { name: 'secret', access: 'PRIVATE' });

    const { response, text } = await feed(`${b.url}/events.ics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    expect(response.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expectWellFolded(text);
    expect(text).toContain('\r\nREFRESH-INTERVAL;VALUE=DURATION:PT1H\r\n');
    expect(text).toMatch(/\r\nSUMMARY:Zürich €/);
    // The summary needed folding: its line is longer than 75 octets.
    expect(Buffer.byteLength(`SUMMARY:${summary}`)).toBeGreaterThan(75);
    expect(text).not.toContain('METHOD:');

    const { calendar, events } = parse(text);
    expect(calendar.getFirstPropertyValue('version')).toBe('2.0');
    expect(String(calendar.getFirstPropertyValue('prodid'))).toMatch(/^-\/\/.+\/\/.+\/\/EN$/);
    expect(calendar.getFirstPropertyValue('name')).toBe('Events');
    expect(calendar.getFirstPropertyValue('x-wr-calname')).toBe('Events');
    expect(String(calendar.getFirstPropertyValue('refresh-interval'))).toBe('PT1H');
    expect(events.has(hidden)).toBe(false);
    const vevent = events.get(id);
    expect(vevent).toBeDefined();
    if (vevent === undefined) return;
    expect(vevent.getAllProperties('uid')).toHaveLength(1);
    expect(vevent.getFirstPropertyValue('summary')).toBe(summary);
    expect(vevent.getFirstPropertyValue('description')).toBe(description.replace('\r\n', '\n'));
    const start = vevent.getFirstPropertyValue('dtstart') as InstanceType<typeof ICAL.Time>;
    expect(start.zone?.tzid).toBe('UTC');
    expect(start.toJSDate().toISOString()).toBe('2026-07-01T16:30:00.000Z');
    expect(text).toMatch(/\r\nDTSTART:20260701T163000Z\r\n/);
    expect(vevent.getFirstPropertyValue('sequence')).toBe(0);
    const stamp = vevent.getFirstPropertyValue('dtstamp') as InstanceType<typeof ICAL.Time>;
    const modified = vevent.getFirstPropertyValue('last-modified') as InstanceType<typeof ICAL.Time>;
    const event = (await call(a, `/events/${id}`)).json as { updatedAt: string };
    expect(modified.toJSDate().getTime()).toBe(Math.floor(Date.parse(event.updatedAt) / 1000) * 1000);
    expect(stamp.toJSDate().getTime()).toBe(modified.toJSDate().getTime());

    // Nothing changed: the same ETag on the other instance, 304 for If-None-Match, the same text.
    const etag = String(response.headers.get('etag'));
    const again = await feed(`${a.url}/events.ics`, { 'if-none-match': etag });
    expect(again.response.status).toBe(304);
    expect(again.text).toBe('');
    expect((await feed(`${a.url}/events.ics`)).text).toBe(text);

    // A change: a new ETag, SEQUENCE 1, a later LAST-MODIFIED, the same UID.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await put(a, alice, id, { name: 'renamed', body: description, date: '2026-07-01T18:30:00+02:00' });
    const changed = await feed(`${b.url}/events.ics`, { 'if-none-match': etag });
    expect(changed.response.status).toBe(200);
    expect(changed.response.headers.get('etag')).not.toBe(etag);
    const after = parse(changed.text).events.get(id);
    expect(after?.getFirstPropertyValue('uid')).toBe(vevent.getFirstPropertyValue('uid'));
    expect(after?.getFirstPropertyValue('sequence')).toBe(1);
    expect(after?.getFirstPropertyValue('summary')).toBe('renamed');
    const modifiedAfter = after?.getFirstPropertyValue('last-modified') as InstanceType<typeof ICAL.Time>;
    expect(modifiedAfter.toJSDate().getTime()).toBeGreaterThan(modified.toJSDate().getTime());
  });
});

describe('calendar feeds', () => {
  it("serve the window's PUBLIC events plus the owner's PRIVATE ones, to the secret URL only", async () => {
    const [pub, mine, theirs, early, late] = ['pub', 'mine', 'theirs', 'early', 'late'].map((p) =>
      newId(`cf-${p}`),
    );
    await put(a, alice, pub!, { date: '2026-03-10T10:00:00Z' });
    await put(a, alice, mine!, { date: '2026-03-11T10:00:00Z', access: 'PRIVATE' });
    await put(b, bob, theirs!, { date: '2026-03-12T10:00:00Z', access: 'PRIVATE' });
    await put(b, alice, early!, { date: '2026-02-28T23:59:59Z' });
    await put(b, alice, late!, { date: '2026-04-01T00:00:00Z' });

    const created = await call(a, '/calendar-feeds', {
      method: 'POST',
      token: alice,
      body: { include_private: true, from: '2026-03-01T00:00:00Z', to: '2026-04-01T00:00:00Z' },
    });
    expect(created.status, created.text).toBe(201);
    const made = created.json as {
      id: string;
      url: string;
      include_private: boolean;
      from: string;
      to: string;
    };
    expect(made).toMatchObject({
      include_private: true,
      from: '2026-03-01T00:00:00.000Z',
      to: '2026-04-01T00:00:00.000Z',
    });
    expect(made.id).toMatch(/^cf_/);
    expect(made.url).toMatch(new RegExp(`^${a.url}/calendar-feeds/[A-Za-z0-9_-]{43}\\.ics$`));

    const { response, text } = await feed(made.url.replace(a.url, b.url));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    expectWellFolded(text);
    const shown = [...parse(text).events.keys()];
    expect(shown).toContain(pub);
    expect(shown).toContain(mine);
    for (const absent of [theirs, early, late]) expect(shown).not.toContain(absent);
    expect(parse(text).events.get(mine!)?.getFirstPropertyValue('class')).toBe('PRIVATE');
    const etag = String(response.headers.get('etag'));
    expect((await feed(made.url, { 'if-none-match': etag })).response.status).toBe(304);

    // Without include_private: no PRIVATE event, not even the owner's.
    const plain = (await call(b, '/calendar-feeds', { method: 'POST', token: bob, body: {} })).json as {
      url: string;
    };
    const bobsFeed = [...parse((await feed(plain.url)).text).events.keys()];
    expect(bobsFeed).toContain(pub);
    expect(bobsFeed).toContain(early);
    expect(bobsFeed).not.toContain(theirs);
    expect(bobsFeed).not.toContain(mine);

    // The list shows the caller's feeds, without their secret URLs.
    const listed = (await call(b, '/calendar-feeds', { token: alice })).json as Record<string, unknown>[];
    expect(listed.map((f) => f.id)).toEqual([made.id]);
    expect(listed[0]).not.toHaveProperty('url');
    expect(JSON.stringify(listed)).not.toContain(made.url.split('/').at(-1)?.replace('.ics', ''));

    // Bob cannot revoke Alice's feed; Alice revokes it on b and its URL is 404 on a at once.
    expect((await call(a, `/calendar-feeds/${made.id}`, { method: 'DELETE', token: bob })).status).toBe(404);
    expect((await feed(made.url)).response.status).toBe(200);
    expect((await call(b, `/calendar-feeds/${made.id}`, { method: 'DELETE', token: alice })).status).toBe(
      204,
    );
    const revoked = await call(a, new URL(made.url).pathname);
    expect(revoked.status).toBe(404);
    expect(revoked.json).toEqual({ statusCode: 404, message: 'Calendar feed not found', error: 'Not Found' });
    expect((await call(a, new URL(made.url).pathname, { headers: { 'if-none-match': etag } })).status).toBe(
      404,
    );
    expect((await call(a, `/calendar-feeds/${made.id}`, { method: 'DELETE', token: alice })).status).toBe(
      404,
    );
  });

  it('are bounded per user (CALENDAR_FEEDS_PER_USER) and refuse bad windows and unknown fields', async () => {
    const capped = await appOn(storages[0]!, { CALENDAR_FEEDS_PER_USER: '2' });
    try {
      const dana = await hmacToken(newId('dana'));
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const made = await call(capped, '/calendar-feeds', { method: 'POST', token: dana, body: {} });
        expect(made.status).toBe(201);
        ids.push((made.json as { id: string }).id);
      }
      const third = await call(capped, '/calendar-feeds', { method: 'POST', token: dana, body: {} });
      expect(third.status).toBe(409);
      expect(third.json).toMatchObject({ statusCode: 409, error: 'Conflict' });
      expect((await call(capped, '/calendar-feeds', { token: dana })).json).toHaveLength(2);
      await call(capped, `/calendar-feeds/${ids[0]}`, { method: 'DELETE', token: dana });
      expect((await call(capped, '/calendar-feeds', { method: 'POST', token: dana, body: {} })).status).toBe(
        201,
      );
    } finally {
      await capped.close();
    }
    for (const body of [
      { from: '2026-04-01T00:00:00Z', to: '2026-03-01T00:00:00Z' },
      { from: '2026-04-01T00:00:00Z', to: '2026-04-01T00:00:00Z' },
      { from: 'yesterday' },
      { include_private: 'yes' },
      { url: 'x' },
    ]) {
      const answer = await call(a, '/calendar-feeds', { method: 'POST', token: alice, body });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.json).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    }
  });
});
