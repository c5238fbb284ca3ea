import { parseRlqsSettings, type RlqsSettings } from './rlqs/settings.js';
import { nameAliasesIn, resolveAliases } from './settings/aliases.js';
import { type BackendSettings, parseBackendSettings } from './settings/backend.js';
import { type Env, SettingError } from './settings/env.js';
import { type ObservabilitySettings, parseObservabilitySettings } from './settings/observability.js';
import { parseRuntimeSettings, type RuntimeSettings } from './settings/runtime.js';
import { parseServerSettings, type ServerSettings } from './settings/server.js';

/**
 * All settings of the service, parsed once at start-up and frozen. This is the only module that
 * reads `process.env`; each area has its own parser taking the environment object, so tests (and
 * new areas) parse without touching the process environment.
 */
export interface Settings {
  readonly server: ServerSettings;
  readonly runtime: RuntimeSettings;
  readonly backend: BackendSettings;
  /** Statistics sinks, pull metrics, debug server, logs, tracing, gRPC TLS, xDS (docs/observability.md). */
  readonly observability: ObservabilitySettings;
  /** The Rate Limit Quota Service (src/rlqs/). */
  readonly rlqs: RlqsSettings;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * Parses every setting from `env`; throws SettingError naming the wrong setting. The reference's
 * names (`REDIS_*`, `MEMCACHE_*`, `USE_PROMETHEUS`...) are read as aliases of ours
 * (settings/aliases.ts); an error about a value set through an alias names the alias.
 */
export function parseSettings(raw: Env): Settings {
  const { env, readFrom } = resolveAliases(raw);
  try {
    return parseResolved(env);
  } catch (error) {
    if (error instanceof Error && error.name === 'SettingError') {
      throw new SettingError(nameAliasesIn(error.message, readFrom));
    }
    throw error;
  }
}

function parseResolved(env: Env): Settings {
  const settings: Settings = {
    server: parseServerSettings(env),
    runtime: parseRuntimeSettings(env),
    backend: parseBackendSettings(env),
    observability: parseObservabilitySettings(env),
    rlqs: parseRlqsSettings(env),
  };
  if (settings.server.workers > 1 && settings.backend.type === 'memory') {
    throw new SettingError(
      'WORKERS above 1 needs a shared backend (BACKEND_TYPE=redis or memcache): in-process counters would not be exact across workers',
    );
  }
  return deepFreeze(settings);
}

/** The settings of this process. */
export function loadSettings(): Settings {
  return parseSettings(process.env);
}

export { SettingError };
