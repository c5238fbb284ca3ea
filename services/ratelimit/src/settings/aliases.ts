import { type Env, SettingError } from './env.js';

/**
 * The reference's setting names (envoyproxy/ratelimit `src/settings/settings.go`) accepted as
 * aliases of ours, so an operator's existing environment starts this service unchanged. The spec
 * renamed the Redis and memcached settings (`KVSTORE_*`, `MEMSTORE_*`) and the pull-metrics and
 * tagged-statsd ones; every other reference name is already ours.
 *
 * An alias and our name set to different values is a start-up error naming both: there is no
 * precedence an operator could guess.
 */
const REDIS_SUFFIXES = [
  'SOCKET_TYPE',
  'TYPE',
  'URL',
  'POOL_SIZE',
  'AUTH',
  'SENTINEL_AUTH',
  'TLS',
  'TLS_CLIENT_CERT',
  'TLS_CLIENT_KEY',
  'TLS_CACERT',
  'TLS_SKIP_HOSTNAME_VERIFICATION',
  'PIPELINE_WINDOW',
  'PIPELINE_LIMIT',
  'CLUSTER_PIPELINE_PARALLELISM',
  'TIMEOUT',
  'POOL_ON_EMPTY_BEHAVIOR',
  'HEALTH_CHECK_ACTIVE_CONNECTION',
  'STARTUP_INITIAL_INTERVAL',
  'STARTUP_MAX_INTERVAL',
  'STARTUP_MAX_ELAPSED_TIME',
  'PERSECOND',
  'PERSECOND_SOCKET_TYPE',
  'PERSECOND_TYPE',
  'PERSECOND_URL',
  'PERSECOND_POOL_SIZE',
  'PERSECOND_AUTH',
  'PERSECOND_SENTINEL_AUTH',
  'PERSECOND_TLS',
  'PERSECOND_PIPELINE_WINDOW',
  'PERSECOND_PIPELINE_LIMIT',
  'PERSECOND_CLUSTER_PIPELINE_PARALLELISM',
  'PERSECOND_TIMEOUT',
  'PERSECOND_POOL_ON_EMPTY_BEHAVIOR',
] as const;

const MEMCACHE_SUFFIXES = [
  'HOST_PORT',
  'MAX_IDLE_CONNS',
  'SRV',
  'SRV_REFRESH',
  'TLS',
  'TLS_CLIENT_CERT',
  'TLS_CLIENT_KEY',
  'TLS_CACERT',
  'TLS_SKIP_HOSTNAME_VERIFICATION',
] as const;

/** `[reference name, our name]`. */
export const SETTING_ALIASES: readonly (readonly [string, string])[] = [
  ...REDIS_SUFFIXES.map((s) => [`REDIS_${s}`, `KVSTORE_${s}`] as const),
  ...MEMCACHE_SUFFIXES.map((s) => [`MEMCACHE_${s}`, `MEMSTORE_${s}`] as const),
  ['USE_PROMETHEUS', 'USE_PULLMETRICS'],
  ['PROMETHEUS_ADDR', 'PULLMETRICS_ADDR'],
  ['PROMETHEUS_PATH', 'PULLMETRICS_PATH'],
  ['PROMETHEUS_MAPPER_YAML', 'PULLMETRICS_MAPPER_YAML'],
  ['PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS', 'PULLMETRICS_RESPONSE_TIME_AS_MILLISECONDS'],
  ['USE_DOG_STATSD', 'USE_EXT_STATSD'],
  ['USE_DOG_STATSD_MOGRIFIERS', 'EXT_STATSD_MOGRIFIERS'],
];

/** The reference reads `DOG_STATSD_MOGRIFIER_<NAME>_{PATTERN,NAME,TAGS}`; ours is `EXT_STATSD_MOGRIFIERS_<NAME>_...`. */
const MOGRIFIER_ALIAS_PREFIX = 'DOG_STATSD_MOGRIFIER_';
const MOGRIFIER_PREFIX = 'EXT_STATSD_MOGRIFIERS_';

export interface ResolvedEnv {
  /** The environment with every alias copied to our name. */
  env: Env;
  /** Our name -> the reference name it was read from, for error messages. */
  readFrom: ReadonlyMap<string, string>;
}

function isSet(v: string | undefined): v is string {
  return v !== undefined && v !== '';
}

export function resolveAliases(env: Env): ResolvedEnv {
  const out: Record<string, string | undefined> = { ...env };
  const readFrom = new Map<string, string>();
  const pairs: (readonly [string, string])[] = [...SETTING_ALIASES];
  for (const name of Object.keys(env)) {
    if (name.startsWith(MOGRIFIER_ALIAS_PREFIX)) {
      pairs.push([name, MOGRIFIER_PREFIX + name.slice(MOGRIFIER_ALIAS_PREFIX.length)]);
    }
  }
  for (const [alias, ours] of pairs) {
    const a = env[alias];
    if (!isSet(a)) continue;
    const o = env[ours];
    if (isSet(o) && o !== a) {
      throw new SettingError(
        `${ours} and ${alias} (the reference's name for it) are both set, to different values ('${o}' and '${a}'): set only one`,
      );
    }
    if (!isSet(o)) {
      out[ours] = a;
      readFrom.set(ours, alias);
    }
  }
  return { env: out, readFrom };
}

/**
 * Rewrites a setting error so it names the setting the operator actually set: `KVSTORE_URL ...`
 * becomes `REDIS_URL (KVSTORE_URL) ...` when the value came from the alias.
 */
export function nameAliasesIn(message: string, readFrom: ReadonlyMap<string, string>): string {
  let out = message;
  for (const [ours, alias] of readFrom) {
    out = out.replace(new RegExp(`\\b${ours}\\b`, 'g'), `${alias} (${ours})`);
  }
  return out;
}
