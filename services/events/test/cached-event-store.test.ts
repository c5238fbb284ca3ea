import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../src/domain/event.js';
import { atOffset } from '../src/domain/pagination.js';
import { type ChangeFeed, createCachedEventStore } from '../src/storage/cached-event-store.js';
import type { EventPage, EventStore } from '../src/storage/event-store.js';

/** An inner store that counts the reads reaching it and answers from a map. */
function countingStore() {
  const events = new Map<string, StoredEvent>();
  const reads = { get: 0, list: 0 };
  const event = (eventId: string, name: string): StoredEvent => ({
    eventId,
    name,
    body: '',
    cover: null,
    date: '2026-05-01T10:00:00Z',
    access: 'PUBLIC',
    createdBy: 'alice',
    createdAt: new Date(0),
    updatedAt: new Date(0),
    revision: name,
  });
  const store: EventStore = {
    async get(eventId) {
      reads.get += 1;
      return events.get(eventId);
    },
    async list(): Promise<EventPage> {
      reads.list += 1;
      return { events: [...events.values()], total: events.size, bounds: null, more: false };
    },
    async insert(eventId, fields) {
      const created = event(eventId, fields.name);
      events.set(eventId, created);
      return created;
    },
    async replace(eventId, _revision, fields) {
      const replaced = event(eventId, fields.name);
      events.set(eventId, replaced);
      return replaced;
    },
    async remove(eventId) {
      return events.delete(eventId);
    },
    async ping() {},
    async close() {},
  };
  return { store, reads, events, event };
}

const fields = { name: 'v1', body: '', cover: null, date: '2026-05-01T10:00:00Z', access: 'PUBLIC' as const };

describe('read cache admission', () => {
  it('keeps an answer from the second request of its key on, and serves the third from memory', async () => {
    const inner = countingStore();
    const cache = await createCachedEventStore(inner.store, { maxEntries: 10 });
    await inner.store.insert('a', fields, 'alice', new Date());
    for (let i = 0; i < 5; i++) expect((await cache.get('a'))?.name).toBe('v1');
    expect(inner.reads.get).toBe(2);
    for (let i = 0; i < 5; i++) await cache.list({ kind: 'public' }, atOffset(0), 10);
    expect(inner.reads.list).toBe(2);
  });

  it('keeps nothing of keys asked for once (reads spread over many ids)', async () => {
    const inner = countingStore();
    const cache = await createCachedEventStore(inner.store, { maxEntries: 10 });
    for (let i = 0; i < 30; i++) await cache.get(`id-${i}`);
    // asked again after 30 other keys: the doorkeeper (10 keys) forgot them, so each is read again
    for (let i = 0; i < 30; i++) await cache.get(`id-${i}`);
    expect(inner.reads.get).toBe(60);
  });

  it('a write through it clears what it kept; the key is kept again from its second request', async () => {
    const inner = countingStore();
    const cache = await createCachedEventStore(inner.store, { maxEntries: 10 });
    await cache.insert('a', fields, 'alice', new Date());
    await cache.get('a');
    await cache.get('a');
    await cache.replace('a', 'v1', { ...fields, name: 'v2' }, new Date());
    expect((await cache.get('a'))?.name).toBe('v2');
    expect((await cache.get('a'))?.name).toBe('v2');
    expect(inner.reads.get).toBe(4);
    expect((await cache.get('a'))?.name).toBe('v2');
    expect(inner.reads.get).toBe(4);
  });

  it('keeps nothing of keys asked for once between changes, though asked before an earlier change', async () => {
    const inner = countingStore();
    const cache = await createCachedEventStore(inner.store, { maxEntries: 10 });
    await cache.insert('a', fields, 'alice', new Date());
    // every page asked for once per write: each answer would be dropped unused by the next write
    for (let round = 0; round < 3; round++) {
      for (let page = 0; page < 5; page++) await cache.list({ kind: 'public' }, atOffset(page * 10), 10);
      await cache.replace('a', 'v1', fields, new Date());
    }
    expect(inner.reads.list).toBe(15);
    // asked for before the last change only: its first request since is read and not kept
    await cache.list({ kind: 'public' }, atOffset(0), 10);
    await cache.list({ kind: 'public' }, atOffset(0), 10);
    expect(inner.reads.list).toBe(17);
    await cache.list({ kind: 'public' }, atOffset(0), 10);
    expect(inner.reads.list).toBe(17);
  });

  it('keeps nothing while its change feed is down, and again once it is back', async () => {
    const inner = countingStore();
    let setState: (live: boolean) => void = () => {};
    const feed: ChangeFeed = {
      async start(_onChange, onState) {
        setState = onState;
        onState(true);
      },
      async stop() {},
    };
    const cache = await createCachedEventStore(inner.store, { maxEntries: 10, feed });
    await inner.store.insert('a', fields, 'alice', new Date());
    setState(false);
    for (let i = 0; i < 4; i++) await cache.get('a');
    expect(inner.reads.get).toBe(4);
    setState(true);
    for (let i = 0; i < 4; i++) await cache.get('a');
    // back up means a change may have been missed: asked twice again before it is kept
    expect(inner.reads.get).toBe(6);
  });
});
