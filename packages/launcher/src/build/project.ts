import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/** The file that makes a workspace compilable: tsc with it turns `src/` into `dist/`. */
export const BUILD_CONFIG = 'tsconfig.build.json';

/**
 * One workspace's compile step as `tsc -b` sees it: its build config, the configs that config extends
 * (a change to the shared compiler options must rebuild), and the workspaces it references (its
 * `@platform/*` dependencies, built before it).
 */
export interface BuildProject {
  dir: string;
  config: string;
  /** Every tsconfig this one extends, nearest first. */
  extendsChain: string[];
  references: BuildProject[];
}

interface ConfigFile {
  extends?: unknown;
  references?: unknown;
}

function readConfig(file: string): ConfigFile {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as ConfigFile;
  } catch (error) {
    throw new Error(`${file}: not readable as JSON (${error instanceof Error ? error.message : error})`);
  }
}

function extendsChainOf(config: string): string[] {
  const chain: string[] = [];
  let current = config;
  for (;;) {
    const parent = readConfig(current).extends;
    // Only paths are followed (the repository's configs extend each other by path), not packages.
    if (typeof parent !== 'string' || !(parent.startsWith('.') || isAbsolute(parent))) return chain;
    current = resolve(dirname(current), parent);
    if (chain.includes(current)) return chain;
    chain.push(current);
  }
}

/** True when `dir` has a build config, i.e. it can run compiled. */
export function isCompilable(dir: string): boolean {
  return existsSync(join(dir, BUILD_CONFIG));
}

/** Reads the build project of `dir` and, recursively, of the projects it references. */
export function readProject(dir: string, seen = new Map<string, BuildProject>()): BuildProject {
  const absolute = resolve(dir);
  const known = seen.get(absolute);
  if (known) return known;
  const config = join(absolute, BUILD_CONFIG);
  const project: BuildProject = {
    dir: absolute,
    config,
    extendsChain: extendsChainOf(config),
    references: [],
  };
  seen.set(absolute, project);
  const references = readConfig(config).references ?? [];
  if (!Array.isArray(references)) throw new Error(`${config}: references must be a list`);
  for (const reference of references as { path?: unknown }[]) {
    if (typeof reference?.path !== 'string') throw new Error(`${config}: a reference has no path`);
    const target = resolve(absolute, reference.path);
    // A reference names either a folder or its build config.
    project.references.push(readProject(target.endsWith('.json') ? dirname(target) : target, seen));
  }
  return project;
}

/** The project and every project it references, dependencies before dependents, each once. */
export function closure(roots: BuildProject[]): BuildProject[] {
  const ordered: BuildProject[] = [];
  const visit = (project: BuildProject): void => {
    if (ordered.includes(project)) return;
    for (const reference of project.references) visit(reference);
    ordered.push(project);
  };
  for (const root of roots) visit(root);
  return ordered;
}
