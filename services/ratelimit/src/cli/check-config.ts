import { buildConfig, dumpConfig } from '../rules/config-tree.js';
import { readConfigFiles } from '../runtime/read-files.js';
import { StatsRegistry } from '../stats/registry.js';

/**
 * Config checker: validates a config directory exactly as the service would load it and prints the
 * rules, or the error and exit status 1.
 *   tsx src/cli/check-config.ts -config_dir path/to/config [-merge_domain_config] [-runtime_dir dir]
 * Config names are relative to `-runtime_dir` (default: the parent of the config directory).
 */
export async function checkConfigDir(
  configDir: string,
  options: { runtimeDir?: string; mergeDomainConfig?: boolean; yamlOnly?: boolean } = {},
): Promise<{ ok: true; listing: string } | { ok: false; error: string }> {
  const { dirname, resolve } = await import('node:path');
  const dir = resolve(configDir);
  const read = await readConfigFiles({
    configDir: dir,
    runtimeDir: options.runtimeDir ? resolve(options.runtimeDir) : dirname(dir),
    ignoreDotFiles: false,
    yamlOnly: options.yamlOnly ?? true,
  });
  if (!read.ok) return read;
  const built = buildConfig(read.files, new StatsRegistry(true), {
    mergeDomainConfig: options.mergeDomainConfig ?? false,
  });
  if (!built.ok) return built;
  return { ok: true, listing: dumpConfig(built.config) };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  let configDir: string | undefined;
  let runtimeDir: string | undefined;
  let merge = false;
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i]!.replace(/^--?/, '').split('=', 2) as [string, string | undefined];
    if (flag === 'merge_domain_config') merge = inline === undefined || inline === 'true';
    else if (flag === 'config_dir') configDir = inline ?? args[++i];
    else if (flag === 'runtime_dir') runtimeDir = inline ?? args[++i];
    else {
      process.stderr.write(
        `unknown flag '${args[i]}'\nusage: check-config -config_dir DIR [-runtime_dir DIR] [-merge_domain_config]\n`,
      );
      process.exit(2);
    }
  }
  if (!configDir) {
    process.stderr.write('usage: check-config -config_dir DIR [-runtime_dir DIR] [-merge_domain_config]\n');
    process.exit(2);
  }
  const result = await checkConfigDir(configDir, { runtimeDir, mergeDomainConfig: merge });
  if (!result.ok) {
    process.stderr.write(`${result.error}\n`);
    process.exit(1);
  }
  process.stdout.write(result.listing);
  process.stdout.write('config OK\n');
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'))) void main();
