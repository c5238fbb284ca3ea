// First: tracing patches http as it loads (off unless OTEL_* asks for it).
import './telemetry.js';
import { closeInOrder, runService } from '@platform/http-edge/lifecycle';
import { createLogger } from '@platform/logging/logger';
import { startMetricsListener } from '@platform/observability/metrics-listener';
import { collectProcessMetrics } from '@platform/observability/registry';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { tracing } from './telemetry.js';

runService({
  name: 'blog-graphql',
  loadConfig: () => loadConfig(),
  configError: ConfigError,
  start: async (config) => {
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
    return { log: logger, close: closeInOrder([app, metricsListener], tracing) };
  },
});
