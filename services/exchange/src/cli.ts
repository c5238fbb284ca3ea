import { loadConfig } from './config.js';
import { MailCommandError, runMailCommand } from './mail/operator.js';

/**
 * Operator tool: `npm run admin -w services/exchange -- <command>` (same settings as the server).
 * With the embedded database, stop the server first: one process at a time may open the PGlite directory.
 */
const argv = process.argv.slice(2);
if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help') {
  console.log((await import('./cli/commands.js')).USAGE);
  process.exit(0);
}
const config = loadConfig();
// The mail commands read the outbox folder only: no database, so they work while the server runs.
if (argv[0] === 'mail') {
  try {
    await runMailCommand(
      {
        outboxDir: config.mail.outboxDir,
        smtp: config.mail.smtpUrl,
        print: (value) => console.log(JSON.stringify(value, null, 2)),
        write: (text) => process.stdout.write(text),
      },
      argv.slice(1),
    );
    process.exit(0);
  } catch (error) {
    if (!(error instanceof MailCommandError)) throw error;
    console.error(error.message);
    process.exit(2);
  }
}
// The rest only now: the mail commands above start without loading the database and the services.
const { CliError, runCli } = await import('./cli/commands.js');
const { requireExistingData } = await import('./cli/data-folder.js');
const { resolveMasterKey } = await import('./crypto/master-key.js');
const { createSecretBox } = await import('./crypto/secret-box.js');
const { openStorage } = await import('./db/open.js');
const { PaygateClient } = await import('./fiat/client.js');
const { syncCurrencies } = await import('./ledger/store.js');
const { loadReferenceData } = await import('./reference/load.js');
const { forwardToServer, serverRunsIn } = await import('./wallet/operator.js');
const { createWallet } = await import('./wallet/setup.js');
const reference = loadReferenceData(config.referenceFile);
// The tool opens the server's data, never a new one: it refuses when the folder holds no database
// or no master key (`src/cli/data-folder.ts`), naming the folder it looked in.
const refusal = requireExistingData(config);
if (refusal) {
  console.error(refusal);
  process.exit(2);
}
// A sandbox deposit command goes to the running server of the same data folder, if there is one.
if (argv[0] === 'deposit' && config.storage.kind === 'pglite' && serverRunsIn(config.dataDir)) {
  const answer = await forwardToServer(config.dataDir, argv);
  if (answer) {
    if (answer.output !== undefined) console.log(JSON.stringify(answer.output, null, 2));
    if (answer.error) console.error(answer.error);
    process.exit(answer.code);
  }
}
const db = await openStorage(config.storage).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(2);
});
let code = 1;
try {
  await syncCurrencies(db, reference);
  const secretBox = createSecretBox(resolveMasterKey(config.masterKey).key);
  // Only the deposit commands need the wallet (and, for a node custody, its node).
  const wallet =
    argv[0] === 'deposit' ? await createWallet({ db, reference, config: config.wallet }) : undefined;
  code = await runCli(argv, {
    db,
    reference,
    secretBox,
    ...(wallet ? { wallet } : {}),
    ...(argv[0] === 'fiat' ? { gateway: new PaygateClient(config.paygate) } : {}),
    print: (value) =>
      console.log(JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2)),
  });
} catch (error) {
  if (!(error instanceof CliError) && !(error instanceof TypeError && 'code' in error)) throw error;
  console.error(error.message);
  code = 2;
} finally {
  await db.close();
}
process.exit(code);
