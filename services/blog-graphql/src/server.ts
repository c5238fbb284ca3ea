// First: tracing patches http as it loads (off unless OTEL_* asks for it).
import './telemetry.js';
import { closeOnSignals } from '@platform/http-edge/lifecycle';
import { createLogger } from '@platform/logging/logger';
import { startMetricsListener } from '@platform/observability/metrics-listener';
import { collectProcessMetrics } from '@platform/observability/registry';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { tracing } from './telemetry.js';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`blog-graphql: invalid configuration: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger({ service: 'blog-graphql', ...config.log });
  if (config.usingDevelopmentToken) {
    logger.warn('BLOG_AUTH_TOKEN is not set: mutations accept the development token "blog-dev-token"');
  }
  const app = await buildApp(config, logger);
  collectProcessMetrics(app.metrics);
  const metricsListener = await startMetricsListener(app.metrics, config.metrics, logger);
  await new Promise<void>((resolve, reject) => {
    app.server.once('error', reject);
    app.server.listen(config.port, config.host, () => resolve());
  });
  logger.info(
    { port: config.port, host: config.host, dataDir: config.dataDir },
    'blog-graphql listening on /graphql',
  );

  closeOnSignals(logger, {
    closingMessage: 'closing',
    failedMessage: 'close failed',
    close: async () => {
      await Promise.all([app.close(), metricsListener.close()]);
      await tracing.shutdown();
    },
  });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `blog-graphql: could not start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
