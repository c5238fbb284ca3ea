import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { claimLock, holderAlive, LockHeldError, readHolder } from '@platform/sql-storage/process-lock';
import type { ServiceSpec } from './discover.js';
import { serviceDataDir } from './service-env.js';

/**
 * Before anything starts: is the platform already running? A second `npm start` would otherwise see
 * the first instance answer every health check, print "running", and then watch all its own services
 * die (address in use, database in use). Each check answers the one line to print, or undefined.
 */

/** `<cwd>/data/launcher.pid`: the running launcher of this folder (pid and start time). */
export function instanceLockFile(cwd: string): string {
  return join(cwd, 'data', 'launcher.pid');
}

/** Takes the instance lock of `cwd`, or names the launcher holding it. */
export function claimInstance(cwd: string): string | undefined {
  const file = instanceLockFile(cwd);
  mkdirSync(join(cwd, 'data'), { recursive: true });
  try {
    claimLock(file, (pid) => `${pid}`);
    return undefined;
  } catch (error) {
    if (!(error instanceof LockHeldError)) throw error;
    const pid = error.holder.pid;
    return `refused: the platform is already running from ${cwd} (npm start, process ${pid}); stop it first (Ctrl-C in its terminal, or kill ${pid})`;
  }
}

/** A service whose health URL answers before we started it, or whose embedded database is held. */
export async function alreadyRunning(
  specs: readonly ServiceSpec[],
  dataRoot: string,
): Promise<string | undefined> {
  for (const spec of specs) {
    const folder = serviceDataDir(dataRoot, spec);
    const lock = join(folder, 'pgdata.pid');
    const holder = existsSync(lock) ? readHolder(lock) : undefined;
    if (holder && holderAlive(holder)) {
      return `refused: ${spec.name}'s embedded database (${folder}) is in use by process ${holder.pid}, which is already running it; stop it first (kill ${holder.pid})`;
    }
  }
  const answering = await Promise.all(
    specs.map(async (spec) => ((await answers(spec.health)) ? spec : undefined)),
  );
  const first = answering.find((spec) => spec !== undefined);
  if (first) {
    return `refused: ${first.health} already answers: ${first.name} is already running (another npm start, or the service started on its own); stop it first`;
  }
  return undefined;
}

async function answers(url: string): Promise<boolean> {
  // A timer of our own, not AbortSignal.timeout: that one's timer is unref'd, and while fetch waited on
  // a connection that neither answered nor closed, nothing kept the event loop alive, so the launcher's
  // top-level await never settled and Node ended it at once with exit code 13 and no output (seen in CI
  // under load).
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 2_000);
  try {
    const response = await fetch(url, { signal: controller.signal });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
