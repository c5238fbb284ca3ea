import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigManager } from '../../src/runtime/config-manager.js';
import { StatsRegistry } from '../../src/stats/registry.js';

const rule = (domain: string, n: number) =>
  `domain: ${domain}\ndescriptors:\n  - key: user\n    rate_limit:\n      unit: minute\n      requests_per_unit: ${n}\n`;

interface Setup {
  manager: ConfigManager;
  registry: StatsRegistry;
  dir: string;
  root: string;
  limit(domain?: string): number | undefined;
  stat(name: 'success' | 'error'): number;
  errors: string[];
}

const managers: ConfigManager[] = [];
afterEach(() => {
  for (const m of managers.splice(0)) m.close();
});

/** Polls until `check` holds (file events are asynchronous); fails after 5 s. */
async function eventually(check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await sleep(50);
  expect(check()).toBe(true);
}

function setup(
  options: { watchRoot?: boolean; merge?: boolean; ignoreDotFiles?: boolean; yamlOnly?: boolean } = {},
): Setup {
  const base = mkdtempSync(join(tmpdir(), 'rl-reload-'));
  let root = join(base, 'current');
  let dir = join(root, 'config');
  if (options.watchRoot) {
    mkdirSync(join(base, 'v1', 'config'), { recursive: true });
    symlinkSync(join(base, 'v1'), root);
    dir = join(root, 'config');
  } else {
    mkdirSync(dir, { recursive: true });
  }
  const registry = new StatsRegistry();
  const errors: string[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => errors.push(JSON.parse(line).error) });
  const manager = new ConfigManager({
    root,
    runtimeDir: root,
    configDir: dir,
    ignoreDotFiles: options.ignoreDotFiles ?? false,
    yamlOnly: options.yamlOnly ?? true,
    watchRoot: options.watchRoot ?? false,
    mergeDomainConfig: options.merge ?? false,
    registry,
    logger,
    debounceMs: 20,
  });
  managers.push(manager);
  root = options.watchRoot ? base : root;
  return {
    manager,
    registry,
    dir,
    root,
    errors,
    limit: (domain = 'd') =>
      manager.current()?.domains.get(domain)?.children.get('user')?.limit?.requestsPerUnit,
    stat: (name) => registry.snapshot().counters.get(`ratelimit.service.config_load_${name}`) ?? 0,
  };
}

describe('config loading and hot reload (file mode)', () => {
  it('loads, then reloads on write, create, chmod and remove (in-place mode)', async () => {
    const s = setup();
    writeFileSync(join(s.dir, 'a.yaml'), rule('d', 3));
    expect(await s.manager.reload()).toBe(true);
    s.manager.ensureWatching();
    expect(s.limit()).toBe(3);
    expect(s.stat('success')).toBe(1);

    writeFileSync(join(s.dir, 'a.yaml'), rule('d', 5));
    await eventually(() => s.limit() === 5);

    writeFileSync(join(s.dir, 'b.yaml'), rule('e', 7));
    await eventually(() => s.limit('e') === 7);

    const before = s.stat('success');
    chmodSync(join(s.dir, 'b.yaml'), 0o600);
    await eventually(() => s.stat('success') > before);

    unlinkSync(join(s.dir, 'b.yaml'));
    await eventually(() => s.limit('e') === undefined);
    expect(s.limit()).toBe(5);
  });

  it('a broken file keeps the previous config, counts and logs the error; fixing it reloads', async () => {
    const s = setup();
    writeFileSync(join(s.dir, 'a.yaml'), rule('d', 3));
    await s.manager.reload();
    s.manager.ensureWatching();
    // Written whole (a temporary file renamed over it): writeFileSync truncates first, and a reload
    // of the empty file between truncation and write would count a second error.
    writeFileSync(join(s.dir, 'a.yaml.partial'), 'domain: [broken\n');
    renameSync(join(s.dir, 'a.yaml.partial'), join(s.dir, 'a.yaml'));
    await eventually(() => s.stat('error') === 1);
    expect(s.limit()).toBe(3);
    expect(s.errors.at(-1)).toMatch(/^a\.yaml: error loading config file: yaml: /);
    // Replace by rename (as editors do): still watched.
    writeFileSync(join(s.dir, 'tmp.txt'), rule('d', 9));
    renameSync(join(s.dir, 'tmp.txt'), join(s.dir, 'a.yaml'));
    await eventually(() => s.limit() === 9);
  });

  it('the config directory disappearing keeps the config; it is picked up again when it returns', async () => {
    const s = setup();
    writeFileSync(join(s.dir, 'a.yaml'), rule('d', 3));
    await s.manager.reload();
    s.manager.ensureWatching();
    rmSync(s.dir, { recursive: true });
    await eventually(() => s.stat('error') >= 1);
    expect(s.limit()).toBe(3);
    expect(s.errors.at(-1)).toMatch(/config directory '.*' does not exist/);
    mkdirSync(s.dir);
    writeFileSync(join(s.dir, 'a.yaml'), rule('d', 4));
    await eventually(() => s.limit() === 4);
  });

  it('RUNTIME_WATCH_ROOT: a symlink swap of the root reloads; config names are relative to the runtime dir', async () => {
    const s = setup({ watchRoot: true });
    writeFileSync(join(s.root, 'v1', 'config', 'a.yaml'), rule('d', 3));
    await s.manager.reload();
    s.manager.ensureWatching();
    expect(s.limit()).toBe(3);
    mkdirSync(join(s.root, 'v2', 'config'), { recursive: true });
    writeFileSync(join(s.root, 'v2', 'config', 'a.yaml'), 'domain: d\nbogus: 1\n');
    symlinkSync(join(s.root, 'v2'), join(s.root, 'next'));
    renameSync(join(s.root, 'next'), join(s.root, 'current'));
    await eventually(() => s.stat('error') === 1);
    expect(s.errors.at(-1)).toBe("config.a.yaml: config error, unknown key 'bogus'");
    mkdirSync(join(s.root, 'v3', 'config'), { recursive: true });
    writeFileSync(join(s.root, 'v3', 'config', 'a.yaml'), rule('d', 8));
    symlinkSync(join(s.root, 'v3'), join(s.root, 'next'));
    renameSync(join(s.root, 'next'), join(s.root, 'current'));
    await eventually(() => s.limit() === 8);
  });

  it('RUNTIME_IGNOREDOTFILES, yaml-only filter, nested directories and MERGE_DOMAIN_CONFIG', async () => {
    const s = setup({ ignoreDotFiles: true, merge: true });
    writeFileSync(join(s.dir, '.hidden.yaml'), 'not: [valid');
    writeFileSync(join(s.dir, 'notes.txt'), 'not yaml at all: [');
    mkdirSync(join(s.dir, 'sub'));
    writeFileSync(join(s.dir, 'sub', 'x.yaml'), rule('d', 2));
    writeFileSync(
      join(s.dir, 'y.yml'),
      'domain: d\ndescriptors:\n  - key: other\n    rate_limit: { unit: second, requests_per_unit: 1 }\n',
    );
    expect(await s.manager.reload()).toBe(true);
    expect(s.limit()).toBe(2);
    expect([...s.manager.current()!.domains.get('d')!.children.keys()].sort()).toEqual(['other', 'user']);
    expect(s.manager.dump()).toBe(
      'd.other: unit=SECOND requests_per_unit=1, shadow_mode: false, quota_mode: false\nd.user: unit=MINUTE requests_per_unit=2, shadow_mode: false, quota_mode: false\n',
    );
  });

  it('duplicate domains across files fail without MERGE_DOMAIN_CONFIG; with RUNTIME_WATCH_ROOT=false names are relative to the config dir, as the reference', async () => {
    const s = setup();
    writeFileSync(join(s.dir, 'a.yaml'), rule('d', 1));
    writeFileSync(join(s.dir, 'b.yaml'), rule('d', 2));
    expect(await s.manager.reload()).toBe(false);
    expect(s.errors.at(-1)).toBe("b.yaml: duplicate domain 'd' in config file");
    expect(s.manager.current()).toBeUndefined();
  });
});
