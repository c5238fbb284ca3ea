// First: tracing patches http and pg as they load (off unless OTEL_* asks for it).
import './telemetry.js';
import { closeOnSignals, startStep } from '@platform/http-edge/lifecycle';
import { withListeningPort } from '@platform/http-edge/listening-url';
import { createLogger } from '@platform/logging/logger';
import { startMetricsListener } from '@platform/observability/metrics-listener';
import { createMetricsRegistry } from '@platform/observability/registry';
import { buildApp } from './app.js';
import { startOperatorService } from './cli/server-endpoint.js';
import { refuseBesideLiveCluster } from './cluster/single-process.js';
import { ConfigError, loadConfig } from './config.js';
import { resolveMasterKey } from './crypto/master-key.js';
import { createSecretBox } from './crypto/secret-box.js';
import { openStorage } from './db/open.js';
import { startReconcileSchedule } from './ledger/reconcile-schedule.js';
import { syncCurrencies } from './ledger/store.js';
import { createRequestLimits } from './limits/setup.js';
import { openMailer } from './mail/open.js';
import { loadReferenceData, ReferenceDataError } from './reference/load.js';
import { DEMO_ACCOUNTS, seedDemo } from './seed.js';
import { tracing } from './telemetry.js';
import { seedDemoAddresses, startWalletServices } from './wallet/server-wiring.js';
import { createWallet } from './wallet/setup.js';

// A wrong setting or reference file stops the start with one clear line instead of a stack trace.
process.on('uncaughtException', (error) => {
  const clear = error instanceof ConfigError || error instanceof ReferenceDataError;
  console.error(clear ? `exchange: ${error.message}` : error);
  process.exit(1);
});

const config = loadConfig();
const reference = loadReferenceData(config.referenceFile);
const masterKey = resolveMasterKey(config.masterKey);
const db = await openStorage(config.storage);
if (!config.cluster) await refuseBesideLiveCluster(db);
await syncCurrencies(db, reference);
const secretBox = createSecretBox(masterKey.key);
const wallet = await createWallet({ db, reference, config: config.wallet });
const mailer = openMailer(config.mail);
// Without PUBLIC_URL the links follow the address the server listens on (known after listen).
let linkBase = config.mail.publicUrl;
const metrics = createMetricsRegistry();
const app = await buildApp({
  ...(config.metrics.port === 'off' ? {} : { metrics }),
  wallet,
  db,
  reference,
  secretBox,
  nonceWindowMs: config.nonceWindowMs,
  bodyLimit: config.bodyLimit,
  orderPipelineDepth: config.orderPipelineDepth,
  bookSnapshots: config.bookSnapshots,
  codeFailureLimits: config.codeFailureLimits,
  withdrawAddresses: config.withdrawAddresses,
  cancelAfter: config.cancelAfter,
  paygate: config.paygate,
  feed: config.feed,
  fiat: { confirmationTtlMs: config.wallet.confirmationTtlMs, failpoint: config.wallet.failpoint },
  logger: createLogger({ service: 'exchange', ...config.log }),
  mail: { mailer, publicUrl: () => linkBase, linkTtlMs: config.mail.linkTtlMs },
  limits: await createRequestLimits(config.limits, db),
  trustedProxies: config.trustedProxies,
  ...(config.cluster ? { cluster: config.cluster } : {}),
});
app.log.info(
  config.limits.enabled ? { rules: config.limits.file, failureMode: config.limits.failureMode } : {},
  config.limits.enabled
    ? `request limits decided by ${config.limits.grpcTarget ? `services/ratelimit at ${config.limits.grpcTarget}` : config.limits.store === 'database' ? 'the database (shared by every node)' : 'the in-process limiter'}`
    : 'request limits are off (RATE_LIMITS_ENABLED=false)',
);
app.log.info({ mail: mailer.description }, `outgoing mail goes to the ${mailer.description}`);
if (masterKey.created && config.masterKey.kind === 'file') {
  app.log.warn(
    { file: config.masterKey.path },
    'generated a new master key; back it up, API secrets need it',
  );
}
if (config.seedDemo) {
  for (const who of DEMO_ACCOUNTS) {
    const demo = await seedDemo(db, secretBox, reference, config.dataDir, who);
    await seedDemoAddresses(wallet, demo.accountId, app.log);
    const file = `${config.dataDir}/${who.keyFile}`;
    // The secret is never a log line (logs are shipped and kept): it is in the key file (mode 0600),
    // which the launcher prints from, and a terminal sees it once, when the account is created.
    app.log.info(
      { email: who.email, apiKey: demo.apiKey, file },
      demo.created
        ? `created a demo account; its API key and secret are in ${file}`
        : `demo account ready; its API key and secret are in ${file}`,
    );
    if (demo.created && process.stdout.isTTY) {
      process.stdout.write(
        `demo account ${who.email}: API key ${demo.apiKey}, API secret ${demo.apiSecret}\n`,
      );
    }
  }
}

closeOnSignals(app.log, {
  close: async () => {
    await reconcileSchedule?.stop();
    await metricsListener.close();
    await app.close();
    await db.close();
    await tracing.shutdown();
  },
});

// Started after the app, whose cluster node (if any) decides which node runs it.
const reconcileSchedule =
  config.reconcile.intervalMs === 0
    ? undefined
    : startReconcileSchedule(
        db,
        config.reconcile.intervalMs,
        (report) => {
          if (report.ok) app.log.info({ entries: report.entries }, 'ledger reconciliation passed');
          else app.log.error({ problems: report.problems }, 'ledger reconciliation FAILED');
        },
        (error) => app.log.error({ err: error }, 'ledger reconciliation could not run'),
      );
startWalletServices(app, wallet);
await startOperatorService(app, {
  db,
  reference,
  secretBox,
  wallet,
  paygate: config.paygate,
  dataDir: config.dataDir,
});
const metricsListener = await startStep('exchange', startMetricsListener(metrics, config.metrics, app.log));
await startStep('exchange', app.listen({ port: config.port, host: config.host }));
if (config.mail.publicUrlFromListener) linkBase = withListeningPort(linkBase, app.server);
