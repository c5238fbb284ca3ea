import cluster from 'node:cluster';
import { buildApp } from './app.js';
import { loadSettings } from './config.js';
import { type RunningObservability, startObservability } from './observability/start.js';
import { bindGrpc, grpcAddress } from './transport/grpc-server.js';
import { buildGrpcServerCredentials } from './transport/grpc-tls.js';
import { listenHttp } from './transport/http-server.js';

/**
 * Process entry: read settings, build the app, load the config, listen on HTTP and gRPC, and on
 * SIGTERM/SIGINT report unhealthy, stop accepting, finish in-flight calls and exit.
 */
async function main(): Promise<void> {
  let settings: ReturnType<typeof loadSettings>;
  try {
    settings = loadSettings();
  } catch (error) {
    process.stderr.write(`ratelimit: ${(error as Error).message}\n`);
    process.exit(2);
  }
  if (settings.server.workers > 1 && cluster.isPrimary) return runPrimary(settings.server.workers);
  const app = buildApp(settings);
  const { server } = settings;
  let stopping = false;
  let observability: RunningObservability | undefined;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    app.logger.warn({ signal }, 'termination signal received: unhealthy, draining');
    app.markTerminating();
    Promise.all([app.close(), observability?.close()]).then(
      () => process.exit(0),
      (error: unknown) => {
        app.logger.error({ err: error }, 'error while closing');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // A stray rejection (e.g. a late backend reply after a timeout) is logged, never fatal: the
  // service keeps its loaded config and keeps answering.
  process.on('unhandledRejection', (reason) => app.logger.error({ err: reason }, 'unhandled rejection'));

  // Stats sinks, pull metrics and the debug server run while the initial config is awaited too.
  observability = await startObservability({
    settings: settings.observability,
    registry: app.registry,
    rlconfigLines: () =>
      app
        .configDump()
        .split('\n')
        .filter((line) => line.length > 0),
    log: app.logger,
  });
  await app.prepare();
  const grpcPort = await bindGrpc(
    app.grpcServer,
    grpcAddress(server.grpcHost, server.grpcPort, server.grpcUds),
    buildGrpcServerCredentials(settings.observability.grpcServer),
  );
  const httpPort = await listenHttp(app.httpServer, server.host, server.port);
  // warn, as the reference's "Listening for ..." lines, so it shows at the default level.
  app.logger.warn(
    {
      http: `${server.host}:${httpPort}`,
      grpc: server.grpcUds ? `unix:${server.grpcUds}` : `${server.grpcHost}:${grpcPort}`,
    },
    'ratelimit listening',
  );
}

/**
 * WORKERS > 1: this process only forks the workers, which share the listening ports (node:cluster
 * hands connections out round-robin), and passes termination signals on. Allowed only with a shared
 * backend (config.ts), so counters stay exact across workers.
 */
function runPrimary(workers: number): void {
  for (let i = 0; i < workers; i++) cluster.fork();
  let stopping = false;
  cluster.on('exit', (worker, code) => {
    if (!stopping) {
      process.stderr.write(`ratelimit: worker ${worker.process.pid} exited with ${code}; starting another\n`);
      cluster.fork();
    } else if (Object.keys(cluster.workers ?? {}).length === 0) {
      process.exit(0);
    }
  });
  const stop = (signal: NodeJS.Signals): void => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`ratelimit: failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
