import { BlockList, isIP } from 'node:net';

/**
 * The one rule of every service for default secrets (a documented sandbox value, a development token,
 * a generated development key): they serve only where nobody else can reach them, a loopback `HOST`
 * with the embedded database. With a `HOST` other machines can reach, or with `DATABASE_URL` (a
 * shared, lasting deployment), the service refuses to start, naming the setting to set, unless
 * `ALLOW_SANDBOX_SECRETS=true` says it is meant (a sandbox shared on purpose, a test fleet).
 */
export const ALLOW_SANDBOX_SECRETS = 'ALLOW_SANDBOX_SECRETS';

// 127.0.0.0/8 and ::1; BlockList also matches the IPv4-mapped forms (::ffff:127.0.0.1) and any
// spelling of ::1 (0:0:0:0:0:0:0:1), which a string comparison would miss.
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * Whether a listen address only accepts connections from this machine: `localhost`, an address in
 * 127.0.0.0/8, or ::1 (bracketed or not). Anything else, wildcards (0.0.0.0, ::) and host names
 * included, may be reachable from the network.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (name === 'localhost') return true;
  const family = isIP(name);
  if (family === 0) return false;
  return LOOPBACK.check(name, family === 4 ? 'ipv4' : 'ipv6');
}

/** A wrong `ALLOW_SANDBOX_SECRETS`; each service turns it into its own configuration error. */
export class SandboxSettingError extends Error {
  readonly setting = ALLOW_SANDBOX_SECRETS;
  constructor(readonly value: string) {
    super(`${ALLOW_SANDBOX_SECRETS} must be true or false, got "${value}"`);
    this.name = 'SandboxSettingError';
  }
}

/**
 * `ALLOW_SANDBOX_SECRETS`: `true`/`1` or `false`/`0`/unset; anything else throws what `fail` makes of
 * the SandboxSettingError (the service's own config error, so it stops the start like its other
 * settings), by default the SandboxSettingError itself.
 */
export function sandboxSecretsForced(
  env: Readonly<Record<string, string | undefined>>,
  fail: (error: SandboxSettingError) => Error = (error) => error,
): boolean {
  const raw = env[ALLOW_SANDBOX_SECRETS]?.trim();
  if (raw === undefined || raw === '') return false;
  if (/^(1|true)$/i.test(raw)) return true;
  if (/^(0|false)$/i.test(raw)) return false;
  throw fail(new SandboxSettingError(raw));
}

/** Where the service runs, as its settings say. */
export interface Exposure {
  /** The listen address (`HOST`). */
  readonly host: string;
  /** Whether `DATABASE_URL` is set (a shared, lasting deployment). */
  readonly databaseUrl: boolean;
  /** `ALLOW_SANDBOX_SECRETS=true`. */
  readonly forced: boolean;
}

/** Whether default secrets may serve: loopback without DATABASE_URL, or forced. */
export function defaultSecretsAllowed(exposure: Exposure): boolean {
  return exposure.forced || (isLoopbackHost(exposure.host) && !exposure.databaseUrl);
}

/**
 * The refusal of a default secret, or undefined when it may serve. `setting` is what to set instead;
 * `what` says which default it is, e.g. `the sandbox merchant secret "sandbox-exchange-secret"`.
 */
export function defaultSecretRefusal(
  use: { readonly setting: string; readonly what: string },
  exposure: Exposure,
): string | undefined {
  if (defaultSecretsAllowed(exposure)) return undefined;
  const where = !isLoopbackHost(exposure.host)
    ? `HOST=${exposure.host}, which is not a loopback address`
    : 'DATABASE_URL set';
  return (
    `${use.what} is a default anyone can read in this repository; refused with ${where}: ` +
    `set ${use.setting} to a secret of your own, or ${ALLOW_SANDBOX_SECRETS}=true to use the default anyway`
  );
}
