import { describe, expect, it } from 'vitest';
import type { UpstreamClient, UpstreamOutcome } from '../src/upstream/client.js';
import { memoryHandler } from './support/memory-handler.js';

/** An upstream whose answers the test releases one by one, to order events deterministically. */
function gatedUpstream() {
  const waiting: Array<(outcome: UpstreamOutcome) => void> = [];
  const client: UpstreamClient = {
    post: () => new Promise((resolve) => waiting.push(resolve)),
    close: () => undefined,
  };
  const answer = (index: number, data: unknown) => {
    const text = JSON.stringify({ data });
    waiting[index]?.({ kind: 'answered', status: 200, text, body: { data } });
  };
  return { client, waiting, answer };
}

const handlerWith = (upstream: UpstreamClient) => memoryHandler(upstream);

const request = {
  body: { query: '{ posts { nodes { title } } }' },
  authorization: undefined,
  idempotencyKey: undefined,
};
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('GraphQLHandler and mutations racing queries', () => {
  it('does not let a query that started before an invalidation serve or cache pre-mutation data as fresh', async () => {
    const upstream = gatedUpstream();
    const { handler, cache } = await handlerWith(upstream.client);
    const before = handler.handle(request);
    await tick();
    cache.invalidate(new Set(['Post'])); // a mutation of posts succeeded meanwhile
    const after = handler.handle(request);
    await tick();
    expect(upstream.waiting).toHaveLength(2); // the second caller did not join the older request
    upstream.answer(0, { posts: { nodes: [{ title: 'old' }] } });
    expect(String((await before).body)).toContain('old');
    upstream.answer(1, { posts: { nodes: [{ title: 'new' }] } });
    expect(String((await after).body)).toContain('new');
    const third = await handler.handle(request);
    expect(third.headers['x-cache']).toBe('HIT');
    expect(String(third.body)).toContain('new');
  });

  it('stores a raced answer as invalidated, so the next query asks upstream again', async () => {
    const upstream = gatedUpstream();
    const { handler, cache } = await handlerWith(upstream.client);
    const only = handler.handle(request);
    await tick();
    cache.invalidate(new Set(['Post']));
    upstream.answer(0, { posts: { nodes: [{ title: 'old' }] } });
    await only;
    const next = handler.handle(request);
    await tick();
    expect(upstream.waiting).toHaveLength(2);
    upstream.answer(1, { posts: { nodes: [] } });
    expect((await next).headers['x-cache']).toBe('MISS');
  });
});
