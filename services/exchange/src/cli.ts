import { loadConfig } from './config.js';
import { MailCommandError, runMailCommand } from './mail/operator.js';

/**
 * Operator tool: `npm run admin -w services/exchange -- <command>` (same settings as the server).
 * A command runs against a CommandTarget (src/cli/command-target.ts): the running server of the data
 * folder when one holds the embedded database (its loopback endpoint), else the database opened here.
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
const { requireExistingData } = await import('./cli/data-folder.js');
const { findOperatorEndpoint } = await import('./cli/operator-file.js');
// The tool opens the server's data, never a new one: it refuses when the folder holds no database
// or no master key (`src/cli/data-folder.ts`), naming the folder it looked in.
const refusal = requireExistingData(config);
if (refusal) {
  console.error(refusal);
  process.exit(2);
}
const found =
  config.storage.kind === 'pglite' ? findOperatorEndpoint(config.dataDir) : ({ kind: 'none' } as const);
if (found.kind === 'refused') {
  console.error(found.message);
  process.exit(2);
}
// Only the direct target loads the database, the reference data and the services.
const target =
  found.kind === 'server'
    ? (await import('./cli/loopback-client.js')).serverTarget(found.record)
    : await (await import('./cli/direct-target.js')).openDirectTarget(
        config,
        (await import('./reference/load.js')).loadReferenceData(config.referenceFile),
      );
if ('refusal' in target) {
  console.error(target.refusal);
  process.exit(2);
}
let code: number;
try {
  const result = await target.run(argv);
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  code = result.code;
} finally {
  await target.close();
}
process.exit(code);
