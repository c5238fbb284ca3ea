import { describe, expect, it } from 'vitest';
import type { UpstreamClient } from '../src/upstream/client.js';
import { memoryHandler } from './support/memory-handler.js';

/** A handler over an in-memory cache, an upstream answering `titles` at once, and a clock the test moves. */
async function handlerAt(clock: { now: number }) {
  const titles = { value: 'first' };
  const upstream: UpstreamClient = {
    post: async () => {
      const body = { data: { posts: { nodes: [{ title: titles.value }] } } };
      return { kind: 'answered', status: 200, text: JSON.stringify(body), body };
    },
    close: () => undefined,
  };
  const { handler, cache } = await memoryHandler(upstream, { clock: () => clock.now });
  return { handler, cache, titles };
}

const text = JSON.stringify({ query: '{ posts { nodes { title } } }' });

describe('a fresh hit answer handed out again (issue 46)', () => {
  it('is the same answer within a second, and new when Age, the entry or the scope changes', async () => {
    const clock = { now: 10_000 };
    const { handler, cache, titles } = await handlerAt(clock);
    const miss = await handler.handle({
      body: JSON.parse(text),
      text,
      authorization: undefined,
      idempotencyKey: undefined,
    });
    expect(miss.headers['x-cache']).toBe('MISS');
    const recalled = handler.recall(text);
    if (recalled === undefined) throw new Error('the query was not remembered');

    clock.now = 10_200;
    const first = handler.hitNow(recalled, undefined);
    expect(first?.headers).toMatchObject({
      'x-cache': 'HIT',
      age: '0',
      'cache-control': 'public, max-age=59',
    });
    clock.now = 10_900;
    expect(handler.hitNow(recalled, undefined)).toBe(first);

    clock.now = 11_050; // a second later: Age and max-age moved
    const later = handler.hitNow(recalled, undefined);
    expect(later).not.toBe(first);
    expect(later?.headers).toMatchObject({ age: '1', 'cache-control': 'public, max-age=58' });

    const caller = handler.hitNow(recalled, 'Bearer someone');
    expect(caller).toBeUndefined(); // that caller's scope has no entry yet

    // The entry is stored anew with other bytes: the answer says so (body and ETag).
    cache.invalidate(new Set(['Post']));
    titles.value = 'second';
    await handler.handle({
      body: JSON.parse(text),
      text,
      authorization: undefined,
      idempotencyKey: undefined,
    });
    const refreshed = handler.hitNow(recalled, undefined);
    expect(refreshed).not.toBe(later);
    expect(String(refreshed?.body)).toContain('second');
    expect(refreshed?.headers['etag']).not.toBe(later?.headers['etag']);
    expect(refreshed?.headers['age']).toBe('0');
  });
});
