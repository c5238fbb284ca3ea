import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { ConfigFile } from '../rules/config-tree.js';

/**
 * Reading the rule files of the config directory (spec "Configuration loading", file mode):
 * recursively, sorted by path so loading order is stable, named as the reference names them: the
 * path with `/` replaced by `.`, relative to the runtime directory when RUNTIME_WATCH_ROOT is true
 * (`config.a.yaml`; the reference's loader walks ROOT/SUBDIRECTORY) and relative to the config
 * directory when it is false (`a.yaml`; the loader then walks ROOT/SUBDIRECTORY/APPDIRECTORY).
 */
export interface ReadOptions {
  /** `RUNTIME_ROOT/RUNTIME_SUBDIRECTORY`. */
  runtimeDir: string;
  /** `RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY`. */
  configDir: string;
  ignoreDotFiles: boolean;
  yamlOnly: boolean;
  /** `RUNTIME_WATCH_ROOT`: names relative to the runtime dir (true) or the config dir (false). @default true */
  watchRoot?: boolean;
}

/** `dirs`: the config directory and every directory below it (each is watched). */
export type ReadResult = { ok: true; files: ConfigFile[]; dirs: string[] } | { ok: false; error: string };

const YAML_FILE = /\.ya?ml$/i;

async function walk(dir: string, options: ReadOptions, out: string[], dirs: string[]): Promise<void> {
  dirs.push(dir);
  const entries = await readdir(dir, { withFileTypes: true });
  for (const entry of entries) {
    if (options.ignoreDotFiles && entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    // Follow symlinks (a runtime tree is usually a symlink farm).
    const info = entry.isSymbolicLink() ? await stat(path).catch(() => undefined) : entry;
    if (!info) continue;
    if (info.isDirectory()) await walk(path, options, out, dirs);
    else if (info.isFile() && (!options.yamlOnly || YAML_FILE.test(entry.name))) out.push(path);
  }
}

export async function readConfigFiles(options: ReadOptions): Promise<ReadResult> {
  try {
    const info = await stat(options.configDir).catch(() => undefined);
    if (!info?.isDirectory())
      return { ok: false, error: `config directory '${options.configDir}' does not exist` };
    const paths: string[] = [];
    const dirs: string[] = [];
    await walk(options.configDir, options, paths, dirs);
    paths.sort();
    const files: ConfigFile[] = [];
    for (const path of paths) {
      files.push({
        name: relative(options.watchRoot === false ? options.configDir : options.runtimeDir, path)
          .split(sep)
          .join('.'),
        text: await readFile(path, 'utf8'),
      });
    }
    return { ok: true, files, dirs };
  } catch (error) {
    return {
      ok: false,
      error: `cannot read config directory '${options.configDir}': ${(error as Error).message}`,
    };
  }
}
