import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { listenerSettingRefusal, platformDataRoot, serviceEnvironment } from '../src/service-env.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const launcherEntry = join(repoRoot, 'packages/launcher/src/main.ts');

describe('serviceEnvironment', () => {
  const exchange = { name: 'exchange', dataDirs: { DATA_DIR: '' } };
  const proxy = { name: 'graphql-proxy', dataDirs: { CACHE_DIR: 'cache', QUEUE_DIR: 'queue' } };

  it('gives each service its own folder under the DATA_DIR given to the launcher, under the names it reads', () => {
    const base = { DATA_DIR: '/srv/platform', PATH: '/bin' };
    expect(serviceEnvironment(base, exchange, '/srv/platform')).toEqual({
      DATA_DIR: '/srv/platform/exchange',
      PATH: '/bin',
    });
    expect(serviceEnvironment(base, proxy, '/srv/platform')).toEqual({
      CACHE_DIR: '/srv/platform/graphql-proxy/cache',
      QUEUE_DIR: '/srv/platform/graphql-proxy/queue',
      PATH: '/bin',
    });
  });

  it("keeps a service's own setting the operator gave, and changes nothing without DATA_DIR", () => {
    const base = { DATA_DIR: '/srv/p', QUEUE_DIR: '/fast/queue' };
    expect(serviceEnvironment(base, proxy, '/srv/p')).toEqual({
      CACHE_DIR: '/srv/p/graphql-proxy/cache',
      QUEUE_DIR: '/fast/queue',
    });
    const plain = { PATH: '/bin' };
    expect(serviceEnvironment(plain, exchange, '/repo/data')).toBe(plain);
  });

  it('reads a relative DATA_DIR against the folder the command was typed in', () => {
    expect(platformDataRoot({ DATA_DIR: 'state', INIT_CWD: '/home/op' }, '/repo')).toBe('/home/op/state');
    expect(platformDataRoot({}, '/repo')).toBe('/repo/data');
  });
});

describe('listenerSettingRefusal', () => {
  it('refuses a port setting every service would get, naming it, and lets the others through', () => {
    expect(listenerSettingRefusal({ PORT: '9000', METRICS_PORT: '0', HOST: '0.0.0.0' })).toBe(
      "refused: PORT, METRICS_PORT each name one service's port, and npm start would give them to every service; set it for one service started on its own (PORT=9000 npm start -w services/<name>), or unset it",
    );
    expect(listenerSettingRefusal({ HOST: '0.0.0.0', LOG_LEVEL: 'debug', PORT: '' })).toBeUndefined();
  });
});

describe('DATA_DIR=x npm start', () => {
  let launcher: ChildProcess | undefined;
  afterEach(() => {
    if (launcher?.exitCode === null) launcher.kill('SIGKILL');
  });

  it('starts two services that keep embedded data, each in its own folder (one shared folder made the second fail)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'launcher-data-dir-'));
    const seen = join(dir, 'seen');
    mkdirSync(seen);
    // Each service records the folder it was given and claims it, as an embedded database does.
    const source = (name: string) => `
      import { mkdirSync, writeFileSync } from 'node:fs';
      const folder = process.env.DATA_DIR ?? 'unset';
      mkdirSync(folder, { recursive: true });
      writeFileSync(folder + '/claimed', '${name}', { flag: 'wx' });
      writeFileSync(${JSON.stringify(seen)} + '/${name}', folder);
      writeFileSync(${JSON.stringify(seen)} + '/${name}.pid', String(process.pid));
      setInterval(() => {}, 1000);`;
    for (const [index, name] of ['alpha', 'beta'].entries()) {
      mkdirSync(join(dir, 'services', name, 'src'), { recursive: true });
      writeFileSync(
        join(dir, 'services', name, 'package.json'),
        JSON.stringify({ name, platform: { order: index, health: 'http://127.0.0.1:1/health', urls: {} } }),
      );
      writeFileSync(join(dir, 'services', name, 'src/server.ts'), source(name));
    }
    const root = join(dir, 'state');
    launcher = spawn(
      process.execPath,
      ['--import', 'tsx', launcherEntry, '--services-dir', join(dir, 'services'), '--cwd', dir],
      { cwd: repoRoot, env: { ...process.env, DATA_DIR: root, LOG_FORMAT: 'json' }, stdio: 'ignore' },
    );
    const deadline = Date.now() + 30_000;
    while (!(existsSync(join(seen, 'alpha')) && existsSync(join(seen, 'beta'))) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(readFileSync(join(seen, 'alpha'), 'utf8')).toBe(join(root, 'alpha'));
    expect(readFileSync(join(seen, 'beta'), 'utf8')).toBe(join(root, 'beta'));
    // The launcher stops what it started (the test once SIGKILLed it right after SIGTERM and left
    // both services running).
    const exited = new Promise((resolve) => launcher!.once('exit', resolve));
    launcher.kill('SIGTERM');
    await exited;
    for (const name of ['alpha', 'beta']) {
      const pid = Number(readFileSync(join(seen, `${name}.pid`), 'utf8'));
      expect(() => process.kill(pid, 0), `${name} (pid ${pid}) still runs`).toThrow();
    }
  }, 60_000);
});
