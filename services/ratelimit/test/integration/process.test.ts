import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { startServiceProcess } from '@platform/testkit/app';
import { describe, expect, it } from 'vitest';
import { findGrpcPort } from './grpc-port.js';

const run = promisify(execFile);
const SERVICE = resolve(import.meta.dirname, '..', '..');
const TSX = ['--import', 'tsx'];

async function client(grpcPort: number, ...descriptors: string[]): Promise<string> {
  const args = [
    ...TSX,
    join(SERVICE, 'src/cli/client.ts'),
    '-dial_string',
    `127.0.0.1:${grpcPort}`,
    '-domain',
    'example',
  ];
  for (const d of descriptors) args.push('-descriptors', d);
  const { stdout } = await run(process.execPath, args, { cwd: SERVICE });
  const line = stdout.split('\n').find((l) => l.startsWith('response: '));
  return line ? JSON.parse(line.slice('response: '.length)).overallCode : stdout;
}

describe('as a new user would (real process, CLI client)', () => {
  it('example config: OK x3 then OVER_LIMIT; an edit applies without restart; a broken edit keeps the old limit and logs', async () => {
    // A copy of the bundled example, so the test can edit it (RUNTIME_WATCH_ROOT=false: in-place edits).
    const root = mkdtempSync(join(tmpdir(), 'rl-example-'));
    cpSync(join(SERVICE, 'examples/config'), join(root, 'config'), { recursive: true });
    const proc = await startServiceProcess({
      name: 'ratelimit',
      entry: join(SERVICE, 'src/server.ts'),
      cwd: SERVICE,
      env: {
        // The test harness's own REDIS_URL (if set) is the reference's name of KVSTORE_URL: unset it.
        REDIS_URL: '',
        RUNTIME_ROOT: root,
        RUNTIME_WATCH_ROOT: 'false',
        // Listeners on port 0 (no other test can take them); the gRPC one is found by its health check.
        GRPC_PORT: '0',
        DEBUG_PORT: '0',
        HOST: '127.0.0.1',
        GRPC_HOST: '127.0.0.1',
      },
      portVariable: 'PORT',
      port: 0,
      healthPath: '/healthcheck',
    });
    try {
      const grpcPort = await findGrpcPort(proc, [proc.port]);
      expect(proc.output()).toContain('using the in-process store');
      // The example allows 3 per minute and each CLI call starts a process (seconds on a loaded machine):
      // the five calls start early in a minute, and are made again for another user in the rare case
      // that a minute still ended between the first and the last (the window rolled over).
      const intoMinute = Date.now() % 60_000;
      if (intoMinute > 35_000) await sleep(60_000 - intoMinute + 50);
      let codes: string[] = [];
      for (const user of ['alice', 'bob']) {
        const minute = Math.floor(Date.now() / 60_000);
        codes = [];
        for (let i = 0; i < 5; i++) codes.push(await client(grpcPort, `user=${user}`));
        if (Math.floor(Date.now() / 60_000) === minute) break;
      }
      expect(codes).toEqual(['OK', 'OK', 'OK', 'OVER_LIMIT', 'OVER_LIMIT']);

      const file = join(root, 'config', 'example.yaml');
      const original = readFileSync(file, 'utf8');
      writeFileSync(file, original.replace('requests_per_unit: 3', 'requests_per_unit: 10'));
      for (
        let i = 0;
        i < 50 && !proc.output().includes('"msg":"successfully loaded new configuration"}\n'.trim());
        i++
      )
        await sleep(50);
      let code = 'OVER_LIMIT';
      for (let i = 0; i < 50 && code !== 'OK'; i++) {
        code = await client(grpcPort, 'user=alice');
        if (code !== 'OK') await sleep(100);
      }
      expect(code).toBe('OK');

      writeFileSync(
        file,
        `${original.replace('requests_per_unit: 3', 'requests_per_unit: 10')}\nbroken: [\n`,
      );
      for (let i = 0; i < 50 && !proc.output().includes('error loading new configuration'); i++)
        await sleep(50);
      expect(proc.output()).toMatch(
        /error loading new configuration from runtime: example\.yaml: error loading config file/,
      );
      // Still the edited limit of 10: alice has used 6 of them.
      const remaining = await run(
        process.execPath,
        [
          ...TSX,
          join(SERVICE, 'src/cli/client.ts'),
          '-dial_string',
          `127.0.0.1:${grpcPort}`,
          '-domain',
          'example',
          '-descriptors',
          'user=alice',
        ],
        { cwd: SERVICE },
      );
      expect(remaining.stdout).toMatch(/"requestsPerUnit":10/);
    } finally {
      await proc.stop();
    }
  }, 90_000);

  it('starts with no environment at all on the bundled example config', async () => {
    const proc = await startServiceProcess({
      name: 'ratelimit-default',
      entry: join(SERVICE, 'src/server.ts'),
      cwd: resolve(SERVICE, '..', '..'),
      env: { GRPC_PORT: '0', DEBUG_PORT: '0', HOST: '127.0.0.1', REDIS_URL: '' },
      portVariable: 'PORT',
      port: 0,
      healthPath: '/healthcheck',
    });
    try {
      const grpcPort = await findGrpcPort(proc, [proc.port]);
      expect(proc.output()).toContain('RUNTIME_ROOT is not set: using the bundled example config');
      expect(await client(grpcPort, 'user=bob')).toBe('OK');
    } finally {
      await proc.stop();
    }
  });

  it('config checker: exit 0 with the rule listing, exit 1 with the error message', async () => {
    const ok = await run(process.execPath, [
      ...TSX,
      join(SERVICE, 'src/cli/check-config.ts'),
      '-config_dir',
      join(SERVICE, 'examples/config'),
    ]);
    expect(ok.stdout).toContain(
      'example.user: unit=MINUTE requests_per_unit=3, shadow_mode: false, quota_mode: false',
    );
    const bad = mkdtempSync(join(tmpdir(), 'rl-check-'));
    writeFileSync(
      join(bad, 'a.yaml'),
      'domain: d\ndescriptors:\n  - key: k\n    rate_limit: { unit: fortnight, requests_per_unit: 1 }\n',
    );
    const failed = await run(process.execPath, [
      ...TSX,
      join(SERVICE, 'src/cli/check-config.ts'),
      '-config_dir',
      bad,
      '-runtime_dir',
      bad,
    ]).catch((e: { code: number; stderr: string }) => e);
    expect(failed).toMatchObject({ code: 1, stderr: "a.yaml: invalid rate limit unit 'fortnight'\n" });
  });
});
