import { DEFAULT_QUERY_LIMITS } from '@platform/graphql-limits/limits';
import pino from 'pino';
import { ResponseCache } from '../src/cache/response-cache.js';
import { ScopeResolver } from '../src/cache/scope.js';
import { MemoryCacheStore } from '../src/cache/store.js';
import { DocumentAnalyser } from '../src/graphql/document.js';
import { PersistedQueries } from '../src/graphql/persisted.js';
import { QueryGuard } from '../src/limits/query-guard.js';
import { ProxyMetrics } from '../src/metrics.js';
import { GraphQLHandler } from '../src/proxy/graphql-handler.js';
import { LocalQueueAccess } from '../src/queue/access.js';
import { MutationQueue } from '../src/queue/mutation-queue.js';
import { MemoryOutcomeLog } from '../src/queue/outcomes.js';
import { MemoryQueueStore } from '../src/queue/store.js';
import { type UpstreamClient, UpstreamMonitor } from '../src/upstream/client.js';

/**
 * What the query limits (src/limits, issue 28) add to the proxy's hot path, a cache hit, in process:
 * GraphQLHandler.handle on a cached query with the guard against the same without it (the anchor),
 * alternating rounds, median of the per-round ratios. The query is a WPGraphQL-shaped one with a
 * fragment, aliases and variables (the guard's cost estimate reads them on every request).
 *
 * Usage: npx tsx services/graphql-proxy/bench/query-limits.ts (env BENCH_ROUNDS, default 7;
 * BENCH_CALLS per round, default 20000)
 */

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 7);
const CALLS = Number(process.env['BENCH_CALLS'] ?? 20_000);

const QUERY = `query Home($first: Int = 10, $after: String) {
  recent: posts(first: $first, after: $after) { nodes { ...Card categories { nodes { name slug } } } pageInfo { endCursor } }
  menu: categories(first: 100) { nodes { name slug count } }
}
fragment Card on Post { id title slug date excerpt author { node { name } } tags { nodes { name } } }`;
const BODY = { query: QUERY, variables: { first: 10, after: null } };
const DATA = { recent: { nodes: [], pageInfo: { endCursor: null } }, menu: { nodes: [] } };

async function handler(guarded: boolean): Promise<GraphQLHandler> {
  const logger = pino({ level: 'silent' });
  const upstream: UpstreamClient = {
    post: async () => ({
      kind: 'answered',
      status: 200,
      text: JSON.stringify({ data: DATA }),
      body: { data: DATA },
    }),
    close: () => undefined,
  };
  const cache = await ResponseCache.open(
    new MemoryCacheStore(),
    { maxEntries: 100, maxBytes: 1e7, memoryBytes: 1e7 },
    logger,
  );
  return new GraphQLHandler({
    mode: 'GETMODE',
    authToken: undefined,
    authTokenForQueries: false,
    cache,
    analyser: new DocumentAnalyser(),
    upstream,
    monitor: new UpstreamMonitor(),
    queue: new LocalQueueAccess(await MutationQueue.open(new MemoryQueueStore()), new MemoryOutcomeLog()),
    clock: () => 1_000,
    cacheTtlMs: 3_600_000,
    staleIfErrorMs: 3_600_000,
    scopes: new ScopeResolver({ claim: undefined, secret: undefined }, () => 1_000),
    persisted: new PersistedQueries(1e6),
    ...(guarded ? { guard: new QueryGuard({ limits: DEFAULT_QUERY_LIMITS }) } : {}),
    metrics: new ProxyMetrics(),
    typeTtlsMs: new Map(),
    logger,
    triggerReplay: () => undefined,
    afterMutation: () => undefined,
  });
}

async function timeCalls(target: GraphQLHandler): Promise<number> {
  const request = { body: BODY, authorization: undefined, idempotencyKey: undefined };
  const started = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i += 1) {
    const answer = await target.handle(request);
    if (answer.headers['x-cache'] !== 'HIT') throw new Error('expected a cache hit');
  }
  return Number(process.hrtime.bigint() - started) / CALLS;
}

const plain = await handler(false);
const guarded = await handler(true);
for (const target of [plain, guarded]) {
  await target.handle({ body: BODY, authorization: undefined, idempotencyKey: undefined });
  await new Promise((resolve) => setTimeout(resolve, 50));
  await timeCalls(target); // warm-up
}
const ratios: number[] = [];
for (let round = 0; round < ROUNDS; round += 1) {
  const anchor = await timeCalls(plain);
  const measured = await timeCalls(guarded);
  ratios.push(measured / anchor);
  process.stdout.write(
    `round ${round + 1}: hit without limits ${Math.round(anchor)} ns, with ${Math.round(measured)} ns\n`,
  );
}
const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)] ?? 0;
process.stdout.write(
  `cache hit with the query limits: ${median.toFixed(2)}x the time without (median of ${ROUNDS} rounds)\n`,
);
