import type { FastifyInstance } from 'fastify';
import type { AnswerCache } from '../cache/answer-cache.js';
import type { ProxyConfig } from '../config.js';
import type { LocalDb } from '../local/local-db.js';
import type { QueueAccess } from '../queue/access.js';
import type { UpstreamMonitor } from '../upstream/client.js';

/** GET /health: the original's fields (clients poll them) plus upstream state and cache size. */
export function healthRoutes(
  app: FastifyInstance,
  deps: {
    config: ProxyConfig;
    queue: QueueAccess;
    local: LocalDb;
    monitor: UpstreamMonitor;
    cache: AnswerCache;
    /** The fleet part (CACHE_STORE or QUEUE_STORE redis): Redis state, instances, replayer. */
    fleet?: () => Promise<Record<string, unknown>>;
  },
): void {
  app.get('/health', async () => {
    const { config, queue, local, monitor, cache } = deps;
    const counts = local.counts();
    // Length and head only (XLEN and the stream's first entry in Redis): never the whole queue.
    const queued = await queue.summary().catch(() => undefined);
    const fleet = deps.fleet ? await deps.fleet() : undefined;
    // Degraded: the shared stores (Redis) cannot be reached; the instance answers from what it can.
    const degraded = fleet !== undefined && fleet['redis'] !== 'up';
    const blocked = queued?.head?.status === 'rejected' ? queued.head : undefined;
    return {
      ok: true,
      status: degraded ? 'degraded' : 'ok',
      mode: config.mode,
      upstream: config.upstreamEndpoint ? 'configured' : 'missing',
      upstreamState: monitor.state,
      // `open`: the upstream is down; requests are answered without it until a probe gets an answer.
      breaker: monitor.breakerState,
      // The original's clients read a boolean; the token itself is never shown.
      authToken: config.authToken !== undefined,
      // The port it listens on: PORT, or the kernel's choice when PORT=0.
      port: listeningPort(app) ?? config.port,
      cacheDir: config.cacheDir,
      queueDir: config.queueDir,
      localDbPath: config.localDbPath,
      // null: the queue (Redis) cannot be read now.
      queuedMutations: queued?.size ?? null,
      // Only the head can be rejected (QueueSummary).
      rejectedMutations: queued === undefined ? null : blocked ? 1 : 0,
      // `blocked`: the upstream rejected the head of the queue; nothing behind it is sent, and new
      // SETMODE mutations are refused with QUEUE_BLOCKED until it is retried or discarded.
      queueState:
        queued === undefined ? 'unknown' : blocked ? 'blocked' : queued.size > 0 ? 'pending' : 'empty',
      blockedBy: blocked
        ? {
            id: blocked.id,
            message: blocked.lastError?.message ?? null,
            code: blocked.lastError?.code ?? null,
          }
        : null,
      cache: await cache.sizes().catch(() => ({ entries: null, bytes: null })),
      ...(fleet ? { fleet, pid: process.pid } : {}),
      localData: {
        posts: counts.posts,
        pages: counts.pages,
        categories: counts.categories,
        tags: counts.tags,
        authors: counts.authors,
        lastUpdated: counts.lastUpdated,
      },
    };
  });
}

function listeningPort(app: FastifyInstance): number | undefined {
  const address = app.server.address();
  return address !== null && typeof address === 'object' ? address.port : undefined;
}
