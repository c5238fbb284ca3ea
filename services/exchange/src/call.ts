import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type ApiCredentials, sendCall } from './cli/signed-call.js';
import { loadConfig } from './config.js';

/**
 * `npm run -s call -w services/exchange -- POST /v3/auth/r/wallets '{}'`: one call to the exchange,
 * signed (v3 private paths) with the demo key of the data folder or `--key-file`; prints the status
 * line (stderr), then the body (stdout) (indented when it is JSON). Exit 0 on 2xx, 1 otherwise, 2 on a usage error.
 */
const USAGE = `usage: call [--key-file FILE] [--url URL] METHOD PATH [BODY]
  signs /v3/auth/... and /v3/order/... with the key in FILE ({"apiKey","apiSecret"};
  default <DATA_DIR>/demo-api-key.json, demo2-api-key.json is the second demo account)
  URL defaults to the exchange's address (PUBLIC_URL, or http://HOST:PORT)`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { 'key-file': { type: 'string' }, url: { type: 'string' }, help: { type: 'boolean' } },
});
if (values.help || positionals.length < 2 || positionals.length > 3) {
  console.error(USAGE);
  process.exit(values.help ? 0 : 2);
}
const [method, callPath, body] = positionals as [string, string, string | undefined];
if (!callPath.startsWith('/')) {
  console.error(`PATH must start with /, got ${callPath}\n${USAGE}`);
  process.exit(2);
}
const config = loadConfig();
const keyFile = values['key-file']
  ? path.resolve(process.env.INIT_CWD ?? process.cwd(), values['key-file'])
  : path.join(config.dataDir, 'demo-api-key.json');
let key: ApiCredentials | undefined;
try {
  key = JSON.parse(readFileSync(keyFile, 'utf8')) as ApiCredentials;
} catch {
  key = undefined;
}
const baseUrl = values.url ?? config.mail.publicUrl;
try {
  const answer = await sendCall(baseUrl, { method: method.toUpperCase(), path: callPath, body }, key);
  // The status line on stderr, so that the body can be piped (`| tee /tmp/x.json`).
  console.error(`HTTP ${answer.status}`);
  let shown = answer.body;
  try {
    shown = JSON.stringify(JSON.parse(answer.body), null, 2);
  } catch {
    // not JSON: as received
  }
  console.log(shown);
  process.exit(answer.status >= 200 && answer.status < 300 ? 0 : 1);
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  console.error(
    key
      ? `call failed: ${message} (${baseUrl})`
      : `call failed: ${message}; no key in ${keyFile} (start the exchange once, or --key-file)`,
  );
  process.exit(2);
}
