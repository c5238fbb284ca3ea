import pino from 'pino';
import { ResponseCache } from '../../src/cache/response-cache.js';
import { ScopeResolver } from '../../src/cache/scope.js';
import { MemoryCacheStore } from '../../src/cache/store.js';
import type { GraphQLMode } from '../../src/config.js';
import { DocumentAnalyser } from '../../src/graphql/document.js';
import { PersistedQueries } from '../../src/graphql/persisted.js';
import type { QueryGuard } from '../../src/limits/query-guard.js';
import { ProxyMetrics } from '../../src/metrics.js';
import { GraphQLHandler } from '../../src/proxy/graphql-handler.js';
import { LocalQueueAccess } from '../../src/queue/access.js';
import { MutationQueue } from '../../src/queue/mutation-queue.js';
import { MemoryOutcomeLog } from '../../src/queue/outcomes.js';
import { MemoryQueueStore } from '../../src/queue/store.js';
import { type UpstreamClient, UpstreamMonitor } from '../../src/upstream/client.js';

export interface MemoryHandlerOptions {
  /** @default 'CRUDMODE' */
  readonly mode?: GraphQLMode;
  /** The handler's and the scopes' clock. @default a clock standing at 1,000 ms */
  readonly clock?: () => number;
  readonly guard?: QueryGuard;
}

/**
 * A GraphQLHandler with everything in memory (a cache of 10 entries, a queue, no local copy), a
 * 60 s lifetime and stale-if-error, anonymous scopes, in front of `upstream`.
 */
export async function memoryHandler(upstream: UpstreamClient, options: MemoryHandlerOptions = {}) {
  const logger = pino({ level: 'silent' });
  const clock = options.clock ?? (() => 1_000);
  const cache = await ResponseCache.open(
    new MemoryCacheStore(),
    { maxEntries: 10, maxBytes: 1e6, memoryBytes: 1e6 },
    logger,
  );
  const queue = await MutationQueue.open(new MemoryQueueStore());
  const monitor = new UpstreamMonitor();
  const handler = new GraphQLHandler({
    mode: options.mode ?? 'CRUDMODE',
    authToken: undefined,
    authTokenForQueries: false,
    cache,
    analyser: new DocumentAnalyser(),
    upstream,
    monitor,
    queue: new LocalQueueAccess(queue, new MemoryOutcomeLog()),
    clock,
    cacheTtlMs: 60_000,
    staleIfErrorMs: 60_000,
    scopes: new ScopeResolver({ claim: undefined, secret: undefined }, clock),
    persisted: new PersistedQueries(1e6),
    ...(options.guard ? { guard: options.guard } : {}),
    metrics: new ProxyMetrics(),
    typeTtlsMs: new Map(),
    logger,
    triggerReplay: () => undefined,
    afterMutation: () => undefined,
  });
  return { handler, cache, queue, monitor };
}
