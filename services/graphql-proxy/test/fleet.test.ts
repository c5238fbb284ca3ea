import path from 'node:path';
import { useRedis } from '@platform/testkit/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Balancer, startBalancer } from './support/balancer.js';
import { eventually, getJson, gql, postTitles } from './support/client.js';
import { type EventStream, openEventStream } from './support/events.js';
import {
  BLOG_TOKEN,
  type Blog,
  type ProxyProcess,
  startBlog,
  startProxy,
  tempDir,
} from './support/processes.js';
import { type Relay, startRelay } from './support/relay.js';

// Three proxy processes sharing one throw-away Redis (cache and queue), behind the test's own
// round-robin balancer, in front of the real blog (behind a TCP front: stop() makes it look down)
// through a relay that counts what reaches it.
const redis = useRedis({ fresh: true });
let dir: Awaited<ReturnType<typeof tempDir>>;
let blog: Blog;
let relay: Relay;
let balancer: Balancer;
const proxies: ProxyProcess[] = [];

const POSTS = '{ posts { nodes { id title } } }';
const CREATE =
  'mutation Create($input: CreatePostInput!) { createPost(input: $input) { post { id title } } }';

interface Health {
  status: string;
  pid: number;
  queueState: string;
  queuedMutations: number | null;
  cache: { entries: number | null };
  fleet: {
    instanceId: string;
    redis: string;
    replayer: string | null;
    instances: Array<{ id: string }> | null;
  };
}

const health = async (proxy: ProxyProcess) => (await getJson<Health>(`${proxy.url}/health`)).body;

beforeAll(async () => {
  dir = await tempDir('proxy-fleet');
  blog = await startBlog(path.join(dir.path, 'blog'));
  relay = await startRelay(blog.graphqlUrl);
  const started = await Promise.all(
    [0, 1, 2].map((n) =>
      startProxy(path.join(dir.path, `p${n}`), {
        UPSTREAM_GRAPHQL_ENDPOINT: relay.url,
        AUTH_TOKEN: BLOG_TOKEN,
        GRAPHQL_MODE: 'SETMODE',
        LOCAL_SYNC_ON_START: 'false',
        CACHE_STORE: 'redis',
        QUEUE_STORE: 'redis',
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: 'fleet-test',
        INSTANCE_ID: `p${n}`,
        QUEUE_LEASE_MS: '1500',
      }),
    ),
  );
  proxies.push(...started);
  balancer = await startBalancer(() => proxies.map((proxy) => proxy.url));
}, 180_000);

afterAll(async () => {
  await balancer?.close();
  for (const proxy of proxies) await proxy.close();
  await relay?.close();
  await blog?.close();
  await dir?.remove();
}, 60_000);

describe('a fleet of three proxies on one Redis', () => {
  it('serves a hit on another instance than the one that stored it', async () => {
    const answers = [];
    for (let n = 0; n < 3; n += 1) answers.push(await gql(balancer.url, POSTS));
    expect(new Set(answers.map((answer) => answer.headers.get('x-backend'))).size).toBe(3);
    expect(answers.map((answer) => answer.headers.get('x-cache'))).toEqual(['MISS', 'HIT', 'HIT']);
    expect(answers[2]?.body).toEqual(answers[0]?.body);
    // Each instance's heartbeat lands on its own timer: wait (bounded) until the fleet lists all three.
    let views = await Promise.all(proxies.map(health));
    for (let tries = 0; tries < 40 && views[0]?.fleet.instances?.length !== 3; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      views = await Promise.all(proxies.map(health));
    }
    expect(views.map((view) => view.fleet.redis)).toEqual(['up', 'up', 'up']);
    expect(views[0]?.fleet.instances?.map((instance) => instance.id)).toEqual(['p0', 'p1', 'p2']);
    expect(views[1]?.cache.entries).toBeGreaterThanOrEqual(1);
  });

  it('acts on every instance when one purges or a mutation invalidates: none serves what another removed', async () => {
    const [p0, p1, p2] = proxies as [ProxyProcess, ProxyProcess, ProxyProcess];
    const key = (await gql(p0.url, POSTS)).headers.get('x-cache-key') as string;
    expect((await gql(p1.url, POSTS)).headers.get('x-cache')).toBe('HIT');
    const purged = await fetch(`${p0.url}/cache/purge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key }),
    });
    expect(await purged.json()).toEqual({ purged: 1 });
    expect((await gql(p1.url, POSTS)).headers.get('x-cache')).toBe('MISS');
    expect((await gql(p2.url, POSTS)).headers.get('x-cache')).toBe('HIT');
    // p0 reads the entry too: it is now in p0's near copy (issue 46), which p2's mutation must empty.
    expect((await gql(p0.url, POSTS)).headers.get('x-cache')).toBe('HIT');

    const created = await gql(p2.url, CREATE, { input: { title: 'fleet-online' } });
    expect(created.headers.get('x-mutation')).toBe('executed');
    const after = await gql(p0.url, POSTS);
    expect(after.headers.get('x-cache')).toBe('MISS');
    expect(postTitles(after)).toContain('fleet-online');

    const all = await fetch(`${p1.url}/cache/purge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ all: true }),
    });
    expect(((await all.json()) as { purged: number }).purged).toBeGreaterThanOrEqual(1);
    expect((await gql(p2.url, POSTS)).headers.get('x-cache')).toBe('MISS');
  });

  it('replays mutations queued through all three in one order, and another instance takes over when the replayer is SIGKILLed', async () => {
    // Every instance streams every instance's queue events.
    const streams = await Promise.all(proxies.map((proxy) => openEventStream(`${proxy.url}/queue/events`)));
    await blog.stop();
    const titles = Array.from({ length: 8 }, (_, n) => `fleet-q-${n}`);
    const ids: string[] = [];
    const backends = new Set<string | null>();
    for (const title of titles) {
      const answer = await gql(balancer.url, CREATE, { input: { title } });
      expect(answer.body.extensions?.['queued']).toBe(true);
      backends.add(answer.headers.get('x-backend'));
      ids.push(answer.body.extensions?.['queueId'] as string);
    }
    expect(backends.size).toBe(3);
    const listed = await getJson<{ mutations: Array<{ id: string }> }>(`${proxies[1]?.url}/queue`);
    expect(listed.body.mutations.map((item) => item.id)).toEqual(ids);

    // The fourth mutation reaches the blog, which applies it, but its answer is held at the relay: its
    // replayer is SIGKILLed between sending it and recording it. The next replayer finds the send
    // recorded without an outcome, asks the blog about its idempotency key, takes the stored answer,
    // and does not send it again: the blog sees each key once.
    const held = relay.holdAnswer('fleet-q-3');
    await blog.start();
    const restartedAt = Date.now();
    await eventually(
      'the blog to apply the fourth mutation (its answer held at the relay)',
      async () => (held.answered() ? true : undefined),
      60_000,
    );
    const replayer = (await health(proxies[0] as ProxyProcess)).fleet.replayer;
    const victim = proxies.findIndex((_, n) => `p${n}` === replayer);
    expect(victim).toBeGreaterThanOrEqual(0);
    const victimPid = (await health(proxies[victim] as ProxyProcess)).pid;
    process.kill(victimPid, 'SIGKILL');
    held.release(); // to a connection that died with the replayer
    const survivor = proxies[(victim + 1) % 3] as ProxyProcess;
    await eventually(
      'the queue to drain through another instance',
      async () => ((await health(survivor)).queuedMutations === 0 ? true : undefined),
      60_000,
    );
    // The killed instance stops announcing itself and leaves the fleet view.
    await eventually(
      'the killed instance to leave the fleet view',
      async () =>
        (await health(survivor)).fleet.instances?.some((instance) => instance.id === `p${victim}`)
          ? undefined
          : true,
      30_000,
    );

    // Each mutation applied once by the blog, sent in acceptance order.
    const direct = await gql(blog.url, POSTS);
    const applied = postTitles(direct).filter((title) => title.startsWith('fleet-q-'));
    expect([...applied].sort()).toEqual(titles);
    const reached = relay.requests
      .filter(
        (request) =>
          request.at >= restartedAt &&
          request.body.includes('createPost') &&
          !request.body.includes('ProxyIdempotencyKey'),
      )
      .map((request) => /fleet-q-\d/.exec(request.body)?.[0]);
    const firstSeen = reached.filter((title, n) => reached.indexOf(title) === n);
    expect(firstSeen).toEqual(titles);
    expect(reached).toEqual(titles); // each sent once, in acceptance order
    // The blog's own count of the key's arrivals, asked with the credentials it was sent with.
    const fourth = relay.requests.find((request) => request.body.includes('fleet-q-3'));
    const mutation = JSON.parse(fourth?.body ?? '{}') as { query: string; variables?: unknown };
    const asked = await gql(
      blog.url,
      'query Key($key: String!, $query: String!, $variables: String) { idempotencyKey(key: $key, query: $query, variables: $variables) { state arrivals } }',
      {
        key: fourth?.idempotencyKey,
        query: mutation.query,
        variables: JSON.stringify(mutation.variables ?? null),
      },
      { authorization: fourth?.authorization as string },
    );
    expect(asked.body.data).toEqual({ idempotencyKey: { state: 'APPLIED', arrivals: 1 } });
    expect(relay.bodies.some((body) => body.includes('ProxyIdempotencyKey'))).toBe(true);
    for (const [n, id] of ids.entries()) {
      const outcome = await getJson<{ status: string; recovered?: boolean }>(`${survivor.url}/queue/${id}`);
      expect(outcome.body.status).toBe('sent');
      // The fourth one's answer is the one the blog had stored for its key.
      expect(outcome.body.recovered ?? false).toBe(n === 3);
    }
    // A client listening on a surviving instance learnt of each mutation: queued, then sent.
    const heard = (streams[(victim + 1) % 3] as EventStream).events;
    for (const id of ids) {
      const mine = heard.filter((event) => event.data['id'] === id).map((event) => event.event);
      expect(mine[0]).toBe('queued');
      expect(mine).toContain('sent');
    }
    for (const stream of streams) stream.close();
    await proxies[victim]?.stop();
    await proxies[victim]?.start();
  }, 180_000);

  it('keeps answering while Redis is down and says so in /health, then uses it again', async () => {
    const p0 = proxies[0] as ProxyProcess;
    await gql(p0.url, POSTS);
    await redis.stop();
    const answer = await gql(p0.url, POSTS);
    expect(answer.status).toBe(200);
    expect(postTitles(answer)).toContain('fleet-online');
    const down = await health(p0);
    expect(down.status).toBe('degraded');
    expect(down.fleet.redis).toBe('down');
    expect(down.queueState).toBe('unknown');
    // Without the queue an instance cannot tell whether older mutations wait: nothing sent or queued.
    const refused = await gql(p0.url, CREATE, { input: { title: 'fleet-redis-down' } });
    expect(refused.body.errors?.[0]?.extensions?.['code']).toBe('QUEUE_UNAVAILABLE');
    await redis.restart();
    await eventually(
      'Redis to be used again (by the two instances asked next: each reconnects on its own backoff)',
      async () =>
        (await health(p0)).fleet.redis === 'up' &&
        (await health(proxies[1] as ProxyProcess)).fleet.redis === 'up'
          ? true
          : undefined,
      30_000,
    );
    expect((await gql(p0.url, POSTS)).headers.get('x-cache')).toBe('MISS');
    expect((await gql(proxies[1]?.url as string, POSTS)).headers.get('x-cache')).toBe('HIT');
    expect((await health(p0)).status).toBe('ok');
  }, 60_000);
});
