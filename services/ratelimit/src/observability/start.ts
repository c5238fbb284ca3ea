import type { ObservabilitySettings } from '../settings/observability.js';
import { startPullMetricsServer } from '../stats/pull-metrics.js';
import type { StatsRegistry } from '../stats/registry.js';
import { type RunningStats, startStatsSinks } from '../stats/sinks.js';
import { startDebugServer } from './debug-server.js';
import type { RunningHttpServer } from './http-listen.js';

/**
 * Starts the process-level observability servers in one call from `server.ts`: the stats flush
 * loop, the pull-metrics endpoint (when `USE_PULLMETRICS`) and the debug server. A pull-metrics
 * endpoint that cannot listen stops the start-up (it was asked for); a debug port already in use
 * is logged and skipped, since the debug server is an aid, not part of the service.
 */
export interface ObservabilityParts {
  readonly settings: ObservabilitySettings;
  readonly registry: StatsRegistry;
  /** `/rlconfig` lines of the config in force. */
  readonly rlconfigLines: () => readonly string[];
  readonly log?: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Standard-output writer for `USE_STATSD=false`. @default process.stdout */
  readonly writeStdout?: (text: string) => void;
}

export interface RunningObservability {
  readonly stats: RunningStats;
  readonly pullMetrics: RunningHttpServer | undefined;
  readonly debug: RunningHttpServer | undefined;
  close(): Promise<void>;
}

export async function startObservability(parts: ObservabilityParts): Promise<RunningObservability> {
  const { settings, registry, log } = parts;
  const stats = startStatsSinks(settings.stats, registry, parts.writeStdout);
  let pullMetrics: RunningHttpServer | undefined;
  let debug: RunningHttpServer | undefined;
  try {
    if (settings.pullMetrics.enabled) {
      pullMetrics = await startPullMetricsServer(settings.pullMetrics, registry);
      log?.info({ port: pullMetrics.port, path: settings.pullMetrics.path }, 'pull metrics listening');
    }
  } catch (error) {
    await stats.close();
    throw new Error(`PULLMETRICS_ADDR: cannot listen: ${(error as Error).message}`);
  }
  try {
    debug = await startDebugServer(settings.debug, { registry, rlconfigLines: parts.rlconfigLines });
    log?.info({ host: settings.debug.host, port: debug.port }, 'debug server listening');
  } catch (error) {
    log?.error({ error: (error as Error).message, port: settings.debug.port }, 'debug server not started');
  }
  return {
    stats,
    pullMetrics,
    debug,
    async close() {
      await Promise.all([pullMetrics?.close(), debug?.close()]);
      await stats.close();
    },
  };
}
