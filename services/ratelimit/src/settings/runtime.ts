import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bool, type Env, oneOf, text } from './env.js';

/** Where the rule files come from (spec "Configuration loading"). */
export interface RuntimeSettings {
  /** `CONFIG_TYPE`: `FILE` or `GRPC_XDS_SOTW`. @default FILE */
  configType: 'FILE' | 'GRPC_XDS_SOTW';
  /** `RUNTIME_ROOT`. @default services/ratelimit/examples (deviation: the reference uses /srv/runtime_data/current) */
  root: string;
  /** `RUNTIME_SUBDIRECTORY`. @default '' */
  subdirectory: string;
  /** `RUNTIME_APPDIRECTORY`. @default config */
  appDirectory: string;
  /** `RUNTIME_IGNOREDOTFILES`. @default false */
  ignoreDotFiles: boolean;
  /** `RUNTIME_WATCH_ROOT`: true reloads on a symlink swap of the root; false on in-place edits. @default true (false for the built-in example) */
  watchRoot: boolean;
  /** `RUNTIME_YAML_ONLY`: read only `*.yaml`/`*.yml` files. @default true */
  yamlOnly: boolean;
  /** `MERGE_DOMAIN_CONFIG`. @default false */
  mergeDomainConfig: boolean;
  /** `FORCE_START_WITHOUT_INITIAL_CONFIG`. @default false */
  forceStartWithoutInitialConfig: boolean;
  /** True when RUNTIME_ROOT was unset and the bundled example config is used. */
  usingBundledExample: boolean;
}

/** `services/ratelimit/examples`: holds `config/example.yaml`. */
export const BUNDLED_EXAMPLE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples');

export function parseRuntimeSettings(env: Env): RuntimeSettings {
  const explicitRoot = text(env, 'RUNTIME_ROOT', '');
  const usingBundledExample = explicitRoot === '';
  return {
    configType: oneOf(env, 'CONFIG_TYPE', ['FILE', 'GRPC_XDS_SOTW'] as const, 'FILE'),
    root: usingBundledExample ? BUNDLED_EXAMPLE_ROOT : explicitRoot,
    subdirectory: text(env, 'RUNTIME_SUBDIRECTORY', ''),
    appDirectory: text(env, 'RUNTIME_APPDIRECTORY', 'config'),
    ignoreDotFiles: bool(env, 'RUNTIME_IGNOREDOTFILES', false),
    watchRoot: bool(env, 'RUNTIME_WATCH_ROOT', !usingBundledExample),
    yamlOnly: bool(env, 'RUNTIME_YAML_ONLY', true),
    mergeDomainConfig: bool(env, 'MERGE_DOMAIN_CONFIG', false),
    forceStartWithoutInitialConfig: bool(env, 'FORCE_START_WITHOUT_INITIAL_CONFIG', false),
    usingBundledExample,
  };
}

/** `RUNTIME_ROOT/RUNTIME_SUBDIRECTORY`: config names are relative to it. */
export function runtimeDirectory(s: RuntimeSettings): string {
  return join(s.root, s.subdirectory);
}

/** `RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY`: the files read. */
export function configDirectory(s: RuntimeSettings): string {
  return join(s.root, s.subdirectory, s.appDirectory);
}
