import { isAbsolute, join, resolve } from 'node:path';
import { invocationDir } from '@platform/logging/data-dir';
import type { ServiceSpec } from './discover.js';

/**
 * What each service's environment says about where its data lives, when the operator gives the
 * platform one data folder. The launcher passes its environment on to every service, so `DATA_DIR=x
 * npm start` had handed the same `x` to the exchange, the gateway and the events API: the second
 * embedded database found the first one's lock and its service failed to start. Given to the
 * launcher, `DATA_DIR` is the platform's data root instead, and each service gets its own folder
 * under it, `<DATA_DIR>/<service>`, under the names it reads (its manifest's `platform.dataDirs`).
 */

/** `<DATA_DIR>` resolved by the data-folder rule (relative: against where the command was typed), else `<cwd>/data`. */
export function platformDataRoot(env: NodeJS.ProcessEnv, cwd: string): string {
  const explicit = env.DATA_DIR;
  if (!explicit) return join(cwd, 'data');
  return isAbsolute(explicit) ? explicit : resolve(invocationDir(env, cwd), explicit);
}

/** The folder of one service's embedded data under the platform's data root. */
export function serviceDataDir(root: string, spec: Pick<ServiceSpec, 'name'>): string {
  return join(root, spec.name);
}

/**
 * `base` for one service: with `DATA_DIR` set, each data setting the service declares points under
 * `<DATA_DIR>/<service>`, unless the operator set that setting too (theirs wins). Without `DATA_DIR`,
 * `base` unchanged (the services' own default is the same folder under `<cwd>/data`).
 */
export function serviceEnvironment(
  base: NodeJS.ProcessEnv,
  spec: Pick<ServiceSpec, 'name' | 'dataDirs'>,
  root: string,
): NodeJS.ProcessEnv {
  if (!base.DATA_DIR) return base;
  const env: NodeJS.ProcessEnv = { ...base };
  delete env.DATA_DIR;
  const own = serviceDataDir(root, spec);
  for (const [setting, under] of Object.entries(spec.dataDirs)) {
    if (setting !== 'DATA_DIR' && base[setting]) env[setting] = base[setting];
    else env[setting] = under === '' ? own : join(own, under);
  }
  return env;
}

/**
 * Settings that name one listener of one service. The launcher's environment reaches every service,
 * so `PORT=9000 npm start` had made each try port 9000 (all but the first failed, address in use) while
 * the launcher polled the health URLs of the manifests, on the usual ports.
 */
const LISTENER_SETTINGS = ['PORT', 'METRICS_PORT', 'GRPC_PORT', 'DEBUG_PORT'] as const;

/** The line refusing a listener setting given to the launcher, or undefined. */
export function listenerSettingRefusal(env: NodeJS.ProcessEnv): string | undefined {
  const given = LISTENER_SETTINGS.filter((name) => env[name] !== undefined && env[name] !== '');
  if (given.length === 0) return undefined;
  const example = `${given[0]}=${env[given[0] as string]}`;
  return `refused: ${given.join(', ')} ${given.length > 1 ? 'each name' : 'names'} one service's port, and npm start would give ${given.length > 1 ? 'them' : 'it'} to every service; set it for one service started on its own (${example} npm start -w services/<name>), or unset it`;
}
