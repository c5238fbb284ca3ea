// First: tracing patches http and fetch as they load (off unless OTEL_* asks for it).
import './telemetry.js';
import { closeInOrder, runService } from '@platform/http-edge/lifecycle';
import { createLogger } from '@platform/logging/logger';
import { startMetricsListener } from '@platform/observability/metrics-listener';
import { collectProcessMetrics } from '@platform/observability/registry';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { tracing } from './telemetry.js';

runService({
  name: 'graphql-proxy',
  loadConfig: () => loadConfig(),
  configError: ConfigError,
  start: async (config) => {
    const logger = createLogger({ service: 'graphql-proxy', ...config.log });
    if (config.embedded) {
      logger.info(
        { upstream: config.upstreamEndpoint },
        'UPSTREAM_GRAPHQL_ENDPOINT not set: using the local blog upstream and its development token',
      );
    }
    const app = await buildApp(config, logger);
    collectProcessMetrics(app.metrics);
    const metricsListener = await startMetricsListener(app.metrics, config.metrics, logger);
    await app.fastify.listen({ port: config.port, host: config.host });
    app.startBackground();
    logger.info(
      { port: config.port, mode: config.mode, cacheDir: config.cacheDir, queueDir: config.queueDir },
      'graphql-proxy listening',
    );
    return { log: logger, close: closeInOrder([app, metricsListener], tracing) };
  },
});
