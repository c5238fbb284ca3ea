import { randomUUID } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { useMemcached } from '@platform/testkit/fixtures';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callShouldRateLimit } from '../../src/cli/client.js';
import { Code } from '../../src/proto/messages.js';
import { type RunningApp, startApp } from './app-harness.js';

const RULES = `
domain: alg
descriptors:
  - key: sw
    rate_limit: { unit: minute, requests_per_unit: 2, algorithm: sliding_window }
  - key: tb
    rate_limit: { unit: hour, requests_per_unit: 60, algorithm: token_bucket, burst: 2 }
  - key: fixed
    rate_limit: { unit: minute, requests_per_unit: 5 }
`;

const json = (descriptors: Record<string, string>[]) =>
  JSON.stringify({
    domain: 'alg',
    descriptors: descriptors.map((d) => ({
      entries: Object.entries(d).map(([key, value]) => ({ key, value })),
    })),
  });

async function post(base: string, payload: string) {
  const r = await fetch(`${base}/json`, { method: 'POST', body: payload });
  return { status: r.status, body: JSON.parse(await r.text()), headers: r.headers };
}

/** Polls until `check` holds (file events are asynchronous); fails after 5 s. */
async function eventually(check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await sleep(50);
  expect(check()).toBe(true);
}

describe('algorithms through the real servers (in-process store)', () => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp({ 'rules.yaml': RULES }, { LIMIT_ALL_DESCRIPTORS_HEADERS_ENABLED: 'true' });
  });
  afterAll(async () => {
    await s.close();
  });

  it('gRPC: a sliding window and a token bucket refuse past their limits', async () => {
    const user = randomUUID();
    const sw = [];
    const tb = [];
    for (let i = 0; i < 3; i++) {
      sw.push(
        (
          await callShouldRateLimit(s.grpc, {
            domain: 'alg',
            descriptors: [{ entries: [{ key: 'sw', value: user }] }],
            hitsAddend: 0,
          })
        ).overallCode,
      );
      tb.push(
        (
          await callShouldRateLimit(s.grpc, {
            domain: 'alg',
            descriptors: [{ entries: [{ key: 'tb', value: user }] }],
            hitsAddend: 0,
          })
        ).overallCode,
      );
    }
    expect(sw).toEqual([Code.OK, Code.OK, Code.OVER_LIMIT]);
    expect(tb).toEqual([Code.OK, Code.OK, Code.OVER_LIMIT]);
  });

  it('HTTP /json: the per-descriptor headers as HTTP headers, retry-after on the 429, sub-second reset in the body', async () => {
    const user = randomUUID();
    const body = json([{ fixed: user }, { tb: user }]);
    const first = await post(s.http, body);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('5, 60');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('4, 1');
    expect(first.headers.get('retry-after')).toBeNull();
    await post(s.http, body);
    const refused = await post(s.http, body);
    expect(refused.status).toBe(429);
    // 60 per hour: a token every 60 s.
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.body.statuses[1]).toMatchObject({
      code: 'OVER_LIMIT',
      durationUntilReset: expect.stringMatching(/^\d+(\.\d+)?s$/),
    });
  });

  it('a reload with an unknown algorithm keeps the rules in force and counts the error', async () => {
    const errors = () => s.app.registry.snapshot().counters.get('ratelimit.service.config_load_error') ?? 0;
    const before = errors();
    const file = join(s.configDir, 'rules.yaml');
    writeFileSync(`${file}.partial`, RULES.replace('algorithm: sliding_window', 'algorithm: sliding'));
    renameSync(`${file}.partial`, file);
    await eventually(() => errors() === before + 1);
    expect(s.app.currentConfig()!.domains.get('alg')!.children.get('sw')!.limit!.algorithm).toBe(
      'sliding_window',
    );
  });
});

describe('memcached: the fixed window only; other algorithms refuse the file naming the rule and the backend', () => {
  const memcached = useMemcached();
  let s: RunningApp;
  const logged: string[] = [];
  beforeAll(async () => {
    s = await startApp(
      { 'rules.yaml': RULES },
      {
        BACKEND_TYPE: 'memcache',
        MEMSTORE_HOST_PORT: `${memcached.host}:${memcached.port}`,
        FORCE_START_WITHOUT_INITIAL_CONFIG: 'true',
      },
      { logger: pino({ level: 'error' }, { write: (line: string) => logged.push(JSON.parse(line).msg) }) },
    );
  });
  afterAll(async () => {
    await s.close();
  });

  it('the load is refused; a file of fixed windows loads', async () => {
    expect(s.app.currentConfig()).toBeUndefined();
    expect(s.app.registry.snapshot().counters.get('ratelimit.service.config_load_error')).toBe(1);
    expect(logged).toContain(
      "error loading new configuration from runtime: rules.yaml: rule 'alg.sw': algorithm 'sliding_window' is not supported by the memcache backend",
    );
    const file = join(s.configDir, 'rules.yaml');
    writeFileSync(
      `${file}.partial`,
      'domain: alg\ndescriptors:\n  - key: fixed\n    rate_limit: { unit: minute, requests_per_unit: 5, unit_multiplier: 2 }\n',
    );
    renameSync(`${file}.partial`, file);
    await eventually(() => s.app.currentConfig() !== undefined);
    const r = await post(s.http, json([{ fixed: randomUUID() }]));
    expect(r.status).toBe(200);
  });
});
