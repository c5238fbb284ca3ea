import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { isCompilable } from './build/project.js';

/**
 * What the launcher needs to know about one service. It comes from the `platform` field of the
 * service's package.json, so adding a service to the platform needs no launcher change:
 *
 * ```json
 * "platform": { "order": 4, "health": "http://127.0.0.1:4000/health",
 *               "urls": { "GraphQL": "http://127.0.0.1:4000/graphql" }, "after": ["blog-graphql"],
 *               "nodeFlags": ["--max-semi-space-size=8"],
 *               "dataDirs": { "CACHE_DIR": "cache", "QUEUE_DIR": "queue" } }
 * ```
 */
export interface ServiceSpec {
  /** Folder name under services/, used as the log prefix. */
  name: string;
  dir: string;
  /** Entry file under src/ (its compiled form is the same path under dist/ with .js). */
  entry: string;
  /** Has a tsconfig.build.json, so it can run compiled; else it runs through tsx. */
  compilable: boolean;
  /** URL polled until it answers 2xx. */
  health: string;
  urls: Record<string, string>;
  /** Services that must be healthy before this one starts. */
  after: string[];
  order: number;
  /**
   * Flags for `node` itself that the service is deployed with (V8 heap settings: they must be given
   * when the process starts; a running process cannot change them). Not applied in watch mode.
   */
  nodeFlags: string[];
  /**
   * The settings that name the service's data folders, each with its place under the service's own
   * folder (`""` for the folder itself): `{"DATA_DIR": ""}` unless the manifest says otherwise. With
   * `DATA_DIR` given to the launcher they point under `<DATA_DIR>/<service>` (service-env.ts).
   */
  dataDirs: Record<string, string>;
}

interface PlatformField {
  health?: unknown;
  urls?: unknown;
  after?: unknown;
  order?: unknown;
  entry?: unknown;
  nodeFlags?: unknown;
  dataDirs?: unknown;
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' && value !== null && Object.values(value).every((v) => typeof v === 'string')
  );
}

/**
 * The service in `dir` as the launcher runs it, from the `platform` field of its package.json:
 * undefined when it has none or its entry file is missing (not runnable yet); a malformed field is an
 * error naming it.
 */
export function readServiceSpec(dir: string): ServiceSpec | undefined {
  const manifest = join(dir, 'package.json');
  if (!existsSync(manifest)) return undefined;
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { platform?: PlatformField };
  const platform = pkg.platform;
  if (!platform) return undefined;
  const entry = join(dir, typeof platform.entry === 'string' ? platform.entry : 'src/server.ts');
  if (!existsSync(entry)) return undefined;
  if (typeof platform.health !== 'string') {
    throw new Error(`${manifest}: platform.health must be a URL string`);
  }
  const urls = platform.urls ?? {};
  if (!isStringRecord(urls)) throw new Error(`${manifest}: platform.urls must map labels to URL strings`);
  const after = platform.after ?? [];
  if (!Array.isArray(after) || !after.every((a) => typeof a === 'string')) {
    throw new Error(`${manifest}: platform.after must be a list of service names`);
  }
  const nodeFlags = platform.nodeFlags ?? [];
  if (!Array.isArray(nodeFlags) || !nodeFlags.every((f) => typeof f === 'string' && f.startsWith('--'))) {
    throw new Error(`${manifest}: platform.nodeFlags must be a list of node flags, each starting with --`);
  }
  const dataDirs = platform.dataDirs ?? { DATA_DIR: '' };
  if (!isStringRecord(dataDirs) || !Object.keys(dataDirs).every((k) => /^[A-Z][A-Z0-9_]*$/.test(k))) {
    throw new Error(
      `${manifest}: platform.dataDirs must map setting names to folders under the service's data folder`,
    );
  }
  return {
    name: basename(dir),
    dir,
    entry,
    compilable: isCompilable(dir),
    health: platform.health,
    urls,
    after: after as string[],
    order: typeof platform.order === 'number' ? platform.order : 100,
    nodeFlags: nodeFlags as string[],
    dataDirs,
  };
}

/**
 * Lists the services under `servicesDir` that declare a `platform` field and have their entry file.
 * A folder without one is skipped (it is not runnable yet); a malformed field is an error naming it.
 */
export function discoverServices(servicesDir: string): ServiceSpec[] {
  if (!existsSync(servicesDir)) return [];
  const specs = readdirSync(servicesDir)
    .sort()
    .map((name) => readServiceSpec(join(servicesDir, name)))
    .filter((spec): spec is ServiceSpec => spec !== undefined);
  return specs.sort((a, b) => a.order - b.order || a.name.localeCompare(b.name));
}
