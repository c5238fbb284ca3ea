/**
 * Paging `GET /events` by following its `Link` header (issue 20): `next`/`prev` carry keyset
 * cursors, so a client that follows them visits every event once in list order, and, unlike page
 * numbers, neither skips nor repeats an event that existed throughout while others are written.
 * Over a real listener, on PostgreSQL with the production wiring (read cache + NOTIFY) and on PGlite.
 */
import { useTestDatabase } from '@platform/testkit/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventView } from '../src/domain/event.js';
import type { EventStore } from '../src/storage/event-store.js';
import {
  call,
  hmacToken,
  newId,
  openPgliteStore,
  openProductionStore,
  startApp,
  type TestApp,
  validBody,
} from './helpers.js';

const db = useTestDatabase('events_cursor');

/** The targets of a `Link` header by relation. */
function linksOf(header: string | null): Record<string, string> {
  const links: Record<string, string> = {};
  for (const match of (header ?? '').matchAll(/<([^>]+)>; rel="(\w+)"/g)) {
    if (match[1] !== undefined && match[2] !== undefined) links[match[2]] = match[1];
  }
  return links;
}

interface Walk {
  /** Ids of every page, in the order the pages were read. */
  pages: string[][];
  /** The targets followed. */
  targets: string[];
  totals: string[];
}

const backends: { name: string; open: () => Promise<EventStore> }[] = [
  {
    name: 'PostgreSQL + read cache',
    open: () => openProductionStore({ kind: 'postgres', url: db.url, poolMax: 4 }),
  },
  { name: 'PGlite', open: openPgliteStore },
];

describe.each(backends)('following Link on $name', ({ open }) => {
  let app: TestApp;
  const tokens: Record<string, string | undefined> = { anonymous: undefined };

  beforeAll(async () => {
    app = await startApp({ store: await open() });
    tokens.alice = await hmacToken('alice');
    tokens.bob = await hmacToken('bob');
    tokens.member = await hmacToken('carol', { member: true });
  });
  afterAll(async () => {
    await app?.close();
    await app?.store.close();
  });

  /** Reads `start`, then follows `rel` until a page has none; `between` runs before each step. */
  async function walk(
    start: string,
    rel: 'next' | 'prev',
    token: string | undefined,
    between: (step: number) => Promise<void> = async () => {},
  ): Promise<Walk> {
    const result: Walk = { pages: [], targets: [], totals: [] };
    let target: string | undefined = start;
    for (let step = 0; target !== undefined; step++) {
      if (step > 0) await between(step);
      const response = await call(app, target, { token });
      expect(response.status, `${target}: ${response.text}`).toBe(200);
      result.targets.push(target);
      result.pages.push((response.json as EventView[]).map((event) => event.eventId));
      result.totals.push(response.headers.get('x-total-count') ?? '');
      target = linksOf(response.headers.get('link'))[rel];
      expect(result.pages.length).toBeLessThan(100);
    }
    return result;
  }

  async function put(id: string, owner: string, date: string, access: 'PUBLIC' | 'PRIVATE'): Promise<void> {
    const response = await call(app, `/events/${id}`, {
      method: 'PUT',
      token: tokens[owner],
      body: { ...validBody, date, access },
    });
    expect(response.status).toBe(201);
  }

  async function remove(id: string, owner: string): Promise<void> {
    expect((await call(app, `/events/${id}`, { method: 'DELETE', token: tokens[owner] })).status).toBe(204);
  }

  describe('when nothing changes', () => {
    const tag = newId('still');
    /** id -> who may see it: everyone, or the creator (and members) of a PRIVATE one. */
    const seeded: { id: string; owner: string; access: 'PUBLIC' | 'PRIVATE' }[] = [];

    beforeAll(async () => {
      // 23 events over 2030-01-01..03, with ties on the instant (one spelled with an offset).
      for (let i = 0; i < 23; i++) {
        const owner = i % 2 === 0 ? 'alice' : 'bob';
        const access = i % 3 === 0 ? 'PRIVATE' : 'PUBLIC';
        const date = i % 4 === 0 ? '2030-01-02T02:00:00+02:00' : `2030-01-0${1 + (i % 3)}T00:00:00Z`;
        const id = `${tag}-${String(i).padStart(2, '0')}`;
        await put(id, owner, date, access);
        seeded.push({ id, owner, access });
      }
    });

    const viewers = [
      { viewer: 'anonymous', sees: (e: { access: string }) => e.access === 'PUBLIC' },
      // A signed-in user: PUBLIC ones plus their own PRIVATE ones (the creator scope).
      {
        viewer: 'alice',
        sees: (e: { owner: string; access: string }) => e.access === 'PUBLIC' || e.owner === 'alice',
      },
      { viewer: 'member', sees: () => true },
    ];

    it.each(viewers)(
      '$viewer: next from page 1 visits every event once, as page numbers do',
      async ({ viewer, sees }) => {
        const token = tokens[viewer];
        const byNext = await walk('/events?limit=5', 'next', token);
        const total = Number(byNext.totals[0]);
        const last = Math.ceil(total / 5);
        const numbered: string[][] = [];
        for (let page = 1; page <= last; page++) {
          numbered.push(
            ((await call(app, `/events?page=${page}&limit=5`, { token })).json as EventView[]).map(
              (e) => e.eventId,
            ),
          );
        }
        expect(byNext.pages).toEqual(numbered);
        expect(byNext.pages.flat()).toHaveLength(total);
        expect(new Set(byNext.totals)).toEqual(new Set([String(total)]));
        // Every step after the first is a cursor read numbered like the page it reads.
        for (const [i, target] of byNext.targets.slice(1).entries()) {
          expect(target).toMatch(new RegExp(`^/events\\?page=${i + 2}&limit=5&after=[A-Za-z0-9_-]+$`));
        }
        const mine = byNext.pages.flat().filter((id) => id.startsWith(tag));
        expect(mine).toEqual(expect.arrayContaining(seeded.filter(sees).map((e) => e.id)));
        expect(mine).toHaveLength(seeded.filter(sees).length);
      },
    );

    it.each(viewers)(
      '$viewer: prev from the last page visits every event once, backwards',
      async ({ viewer }) => {
        const token = tokens[viewer];
        const first = await call(app, '/events?limit=5', { token });
        const lastTarget = linksOf(first.headers.get('link')).last;
        expect(lastTarget).toMatch(/^\/events\?page=\d+&limit=5$/);
        const byPrev = await walk(lastTarget ?? '', 'prev', token);
        const byNext = await walk('/events?limit=5', 'next', token);
        expect([...byPrev.pages].reverse()).toEqual(byNext.pages);
        for (const target of byPrev.targets.slice(1)) {
          expect(target).toMatch(/^\/events\?page=\d+&limit=5&before=[A-Za-z0-9_-]+$/);
        }
        // The walk back ends on page 1, numbered 1.
        expect(byPrev.targets.at(-1)).toMatch(/^\/events\?page=1&/);
      },
    );

    it('first and last stay numbered; page-number requests link as before, plus cursors', async () => {
      const response = await call(app, '/events?page=2&limit=5', { token: tokens.member });
      const links = linksOf(response.headers.get('link'));
      const ids = (response.json as EventView[]).map((event) => event.eventId);
      expect(links.first).toBe('/events?page=1&limit=5');
      expect(links.last).toMatch(/^\/events\?page=\d+&limit=5$/);
      // The cursors name this page's first and last rows: following them lands next to this page.
      const prev = await call(app, links.prev ?? '', { token: tokens.member });
      const page1 = await call(app, '/events?page=1&limit=5', { token: tokens.member });
      expect(prev.json).toEqual(page1.json);
      expect(links.prev).toMatch(/^\/events\?page=1&limit=5&before=/);
      expect(links.next).toMatch(/^\/events\?page=3&limit=5&after=/);
      expect(ids).toHaveLength(5);
    });
  });

  describe('while events are written between requests', () => {
    /**
     * Reads the creator's list 4 at a time while, between steps, events before the reader's position
     * are deleted and inserted (which shifts every offset) and one ahead is deleted and one inserted.
     * `follow`: by the `next` links, or by page numbers only.
     */
    async function scenario(viewer: 'alice' | 'member', follow: 'links' | 'numbers') {
      const tag = newId(`moving-${follow}`);
      const id = (i: number) => `${tag}-${String(i).padStart(2, '0')}`;
      // Year 1800 sorts before every other row of this file, so the walk starts among these events;
      // bob's PRIVATE ones interleave (hidden from alice, listed for members).
      for (let i = 0; i < 16; i++) {
        await put(
          id(i),
          'alice',
          `1800-01-${String(i + 1).padStart(2, '0')}T00:00:00Z`,
          i % 5 === 0 ? 'PRIVATE' : 'PUBLIC',
        );
        await put(`${id(i)}-bob`, 'bob', `1800-01-${String(i + 1).padStart(2, '0')}T12:00:00Z`, 'PRIVATE');
      }
      const token = tokens[viewer];
      const extra: string[] = [];
      const between = async (step: number): Promise<void> => {
        if (step === 1) {
          // Two rows of the page already read disappear: offsets move back by two.
          await remove(id(1), 'alice');
          await remove(id(2), 'alice');
        }
        if (step === 2) {
          // Three earlier rows appear (offsets move forward by three), one row ahead goes, one comes.
          for (const n of [1, 2, 3]) {
            extra.push(`${tag}-early-${n}`);
            await put(`${tag}-early-${n}`, 'alice', `1799-06-0${n}T00:00:00Z`, 'PUBLIC');
          }
          await remove(id(12), 'alice');
          extra.push(`${tag}-late`);
          await put(`${tag}-late`, 'alice', '1800-01-14T06:00:00Z', 'PUBLIC');
        }
      };
      let result: Walk = { pages: [], targets: [], totals: [] };
      try {
        if (follow === 'links') {
          result = await walk('/events?limit=4', 'next', token, between);
        } else {
          for (let page = 1; page <= 12; page++) {
            if (page > 1) await between(page - 1);
            const target = `/events?page=${page}&limit=4`;
            result.targets.push(target);
            result.pages.push(
              (((await call(app, target, { token })).json as EventView[]) ?? []).map((e) => e.eventId),
            );
          }
        }
      } finally {
        // Clean up, also after a failure, so the next scenario starts at the head of the list again.
        const created = [...Array.from({ length: 16 }, (_, i) => [id(i), `${id(i)}-bob`]).flat(), ...extra];
        for (const eventId of created) {
          await call(app, `/events/${eventId}`, {
            method: 'DELETE',
            token: tokens[eventId.endsWith('-bob') ? 'bob' : 'alice'],
          });
        }
      }
      const seen = result.pages.flat().filter((eventId) => eventId.startsWith(tag));
      const kept = Array.from({ length: 16 }, (_, i) => i).filter((i) => i !== 1 && i !== 2 && i !== 12);
      const throughout = kept.flatMap((i) => (viewer === 'member' ? [id(i), `${id(i)}-bob`] : [id(i)]));
      return { tag, seen, throughout };
    }

    it.each(['alice', 'member'] as const)(
      '%s: next links neither skip nor repeat an event that existed throughout',
      async (viewer) => {
        const { tag, seen, throughout } = await scenario(viewer, 'links');
        expect(new Set(seen).size).toBe(seen.length);
        expect(seen.filter((eventId) => throughout.includes(eventId))).toEqual(throughout);
        // The row inserted ahead of the reader is reached too; the ones behind it are not.
        expect(seen).toContain(`${tag}-late`);
        expect(seen.filter((eventId) => eventId.includes('-early-'))).toEqual([]);
      },
    );

    it('page numbers alone skip and repeat events in the same scenario (what the cursor fixes)', async () => {
      const { seen, throughout } = await scenario('alice', 'numbers');
      const missed = throughout.filter((eventId) => !seen.includes(eventId));
      const repeated = seen.filter((eventId, i) => seen.indexOf(eventId) !== i);
      expect(missed.length).toBeGreaterThan(0);
      expect(repeated.length).toBeGreaterThan(0);
    });
  });
});

describe('the OpenAPI document', () => {
  it('documents after and before as optional cursors with a maximum length', async () => {
    const app = await startApp({ store: await openPgliteStore() });
    try {
      const doc = (await call(app, '/docs/json')).json as {
        paths: Record<
          string,
          {
            get?: {
              parameters?: { name: string; in: string; required?: boolean; schema: { maxLength?: number } }[];
            };
          }
        >;
      };
      const parameters = doc.paths['/events']?.get?.parameters ?? [];
      for (const name of ['after', 'before']) {
        const parameter = parameters.find((p) => p.name === name && p.in === 'query');
        expect(parameter?.required ?? false).toBe(false);
        expect(parameter?.schema.maxLength).toBe(128);
      }
    } finally {
      await app.close();
      await app.store.close();
    }
  });
});
