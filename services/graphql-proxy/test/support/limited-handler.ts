import { DEFAULT_QUERY_LIMITS, type QueryLimits } from '@platform/graphql-limits/limits';
import pino from 'pino';
import { ResponseCache } from '../../src/cache/response-cache.js';
import { ScopeResolver } from '../../src/cache/scope.js';
import { MemoryCacheStore } from '../../src/cache/store.js';
import { DocumentAnalyser } from '../../src/graphql/document.js';
import { PersistedQueries } from '../../src/graphql/persisted.js';
import { QueryGuard } from '../../src/limits/query-guard.js';
import { ProxyMetrics } from '../../src/metrics.js';
import { GraphQLHandler } from '../../src/proxy/graphql-handler.js';
import { LocalQueueAccess } from '../../src/queue/access.js';
import { MutationQueue } from '../../src/queue/mutation-queue.js';
import { MemoryOutcomeLog } from '../../src/queue/outcomes.js';
import { MemoryQueueStore } from '../../src/queue/store.js';
import { type UpstreamClient, UpstreamMonitor } from '../../src/upstream/client.js';

/**
 * A GraphQLHandler with the default query limits in SETMODE, in memory, in front of an upstream that
 * records every call and answers `unavailable` (an accepted mutation would be queued).
 */
export async function limitedHandler(limits: QueryLimits = DEFAULT_QUERY_LIMITS) {
  const logger = pino({ level: 'silent' });
  const calls: string[] = [];
  const upstream: UpstreamClient = {
    post: async (request) => {
      calls.push(request.body);
      return { kind: 'unavailable', reason: 'connection refused' };
    },
    close: () => undefined,
  };
  const cache = await ResponseCache.open(
    new MemoryCacheStore(),
    { maxEntries: 10, maxBytes: 1e6, memoryBytes: 1e6 },
    logger,
  );
  const queue = await MutationQueue.open(new MemoryQueueStore());
  const monitor = new UpstreamMonitor();
  const handler = new GraphQLHandler({
    mode: 'SETMODE',
    authToken: undefined,
    authTokenForQueries: false,
    cache,
    analyser: new DocumentAnalyser(),
    upstream,
    monitor,
    queue: new LocalQueueAccess(queue, new MemoryOutcomeLog()),
    clock: () => 1_000,
    cacheTtlMs: 60_000,
    staleIfErrorMs: 60_000,
    scopes: new ScopeResolver({ claim: undefined, secret: undefined }, () => 1_000),
    persisted: new PersistedQueries(1e6),
    guard: new QueryGuard({ limits }),
    metrics: new ProxyMetrics(),
    typeTtlsMs: new Map(),
    logger,
    triggerReplay: () => undefined,
    afterMutation: () => undefined,
  });
  return { handler, calls, queue, monitor };
}
