import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { resolveMasterKey } from './crypto/master-key.js';
import { createSecretBox } from './crypto/secret-box.js';
import { openStorage } from './db/open.js';
import { syncCurrencies } from './ledger/store.js';
import { openMailer } from './mail/open.js';
import { loadReferenceData, ReferenceDataError } from './reference/load.js';
import { DEMO_ACCOUNTS, seedDemo } from './seed.js';
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
await syncCurrencies(db, reference);
const secretBox = createSecretBox(masterKey.key);
const wallet = await createWallet({ db, reference, config: config.wallet });
const mailer = openMailer(config.mail);
const app = await buildApp({
  wallet,
  db,
  reference,
  secretBox,
  nonceWindowMs: config.nonceWindowMs,
  bodyLimit: config.bodyLimit,
  orderPipelineDepth: config.orderPipelineDepth,
  codeFailureLimits: config.codeFailureLimits,
  paygate: config.paygate,
  fiat: { confirmationTtlMs: config.wallet.confirmationTtlMs, failpoint: config.wallet.failpoint },
  logger: { level: config.logLevel },
  mail: { mailer, publicUrl: config.mail.publicUrl, linkTtlMs: config.mail.linkTtlMs },
});
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
    app.log.info(
      {
        email: who.email,
        apiKey: demo.apiKey,
        apiSecret: demo.apiSecret,
        file: `${config.dataDir}/${who.keyFile}`,
      },
      demo.created ? 'created a demo account' : 'demo account ready',
    );
  }
}

let closing = false;
async function shutdown(signal: string): Promise<void> {
  if (closing) return;
  closing = true;
  app.log.info({ signal }, 'shutting down');
  try {
    await app.close();
    await db.close();
    process.exit(0);
  } catch (error) {
    app.log.error({ err: error }, 'shutdown failed');
    process.exit(1);
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

await startWalletServices(app, { db, reference, secretBox, wallet, dataDir: config.dataDir });
await app.listen({ port: config.port, host: config.host });
