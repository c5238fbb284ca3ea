import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/**
 * The one rule for where a service keeps its embedded data (PGlite databases, caches, queues, keys),
 * shared by every service and by the operator tools so that they always open the same folder:
 *
 * - an explicit setting (`DATA_DIR`, `CACHE_DIR`, ...) that is absolute is used as it is; a relative
 *   one is resolved against the folder the command was typed in (`INIT_CWD`, which npm sets, so
 *   `npm run ... -w services/x` still means the folder the user is in; else the working directory);
 * - without a setting, `<repository root>/data/<service>`, the repository root being the nearest
 *   folder at or above that same folder whose `package.json` declares `workspaces` (the folder
 *   itself when there is none, as for a service deployed on its own).
 *
 * So `npm start` from the root, `npm start -w services/exchange` and `npm run admin -w
 * services/exchange` all use `./data/exchange` of the repository.
 */
export function repositoryRoot(cwd: string = process.cwd()): string {
  let dir = resolve(cwd);
  for (;;) {
    if (declaresWorkspaces(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return resolve(cwd);
    dir = parent;
  }
}

function declaresWorkspaces(file: string): boolean {
  if (!existsSync(file)) return false;
  try {
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as { workspaces?: unknown };
    return manifest.workspaces !== undefined;
  } catch {
    return false;
  }
}

/** The folder relative settings are resolved against: where the command was typed. */
export function invocationDir(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  const invoked = env.INIT_CWD;
  return invoked ? resolve(cwd, invoked) : resolve(cwd);
}

/**
 * A data path: `explicit` (a setting's value, empty or undefined when unset) by the rule above, or
 * `<repository root>/data/<defaultUnderData>`.
 */
export function dataPath(
  explicit: string | undefined,
  defaultUnderData: string,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): string {
  if (explicit) return isAbsolute(explicit) ? explicit : resolve(invocationDir(env, cwd), explicit);
  return join(repositoryRoot(invocationDir(env, cwd)), 'data', defaultUnderData);
}
