/**
 * Mints an HS256 bearer token for local use:
 *   npm run token -w services/events -- <user-id> [--member] [--ttl <seconds>]
 * Signs with JWT_SECRET when set, otherwise with the development secret the server uses
 * (`<DATA_DIR>/jwt-secret`, created if missing). Adds `iss`/`aud` when JWT_ISSUER/JWT_AUDIENCE are set.
 */
import { SignJWT } from 'jose';
import { loadOrCreateDevSecret } from '../src/auth/dev-secret.js';
import { loadConfig } from '../src/config.js';

function fail(message: string): never {
  process.stderr.write(
    `${message}\nusage: npm run token -w services/events -- <user-id> [--member] [--ttl <seconds>]\n`,
  );
  process.exit(2);
}

const args = process.argv.slice(2);
const sub = args.find((arg, i) => !arg.startsWith('--') && args[i - 1] !== '--ttl');
if (sub === undefined) fail('missing <user-id>');
const ttlIndex = args.indexOf('--ttl');
const ttl = ttlIndex >= 0 ? Number(args[ttlIndex + 1]) : 3_600;
if (!Number.isInteger(ttl) || ttl <= 0) fail('--ttl must be a positive number of seconds');

const config = loadConfig();
const auth = config.jwt.auth;
if (auth.kind === 'jwks') fail('JWT_JWKS_URL is set: tokens come from your identity provider, not from here');
const secret = auth.kind === 'hmac' ? auth.secret : (await loadOrCreateDevSecret(auth.file)).secret;

let jwt = new SignJWT(args.includes('--member') ? { [config.jwt.memberClaim]: true } : {})
  .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
  .setSubject(sub)
  .setIssuedAt()
  .setExpirationTime(`${ttl}s`);
if (config.jwt.issuer !== undefined) jwt = jwt.setIssuer(config.jwt.issuer);
if (config.jwt.audience !== undefined) jwt = jwt.setAudience(config.jwt.audience);
process.stdout.write(`${await jwt.sign(new TextEncoder().encode(secret))}\n`);
