import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningApp, startApp, THREE_PER_MINUTE } from './app-harness.js';

const body = (user: string) =>
  JSON.stringify({ domain: 'example', descriptors: [{ entries: [{ key: 'user', value: user }] }] });

async function post(base: string, payload: string, method = 'POST') {
  const r = await fetch(`${base}/json`, {
    method,
    body: payload,
    headers: { 'content-type': 'application/json' },
  });
  return { status: r.status, text: await r.text(), headers: r.headers };
}

describe('HTTP /json and /healthcheck', () => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp(
      { 'rules.yaml': THREE_PER_MINUTE },
      { LIMIT_RESPONSE_HEADERS_ENABLED: 'true', LIMIT_RESET_HEADER: 'X-Reset' },
    );
  });
  afterAll(async () => {
    await s.close();
  });

  it('200 while allowed, 429 with the full protobuf-JSON body when over the limit', async () => {
    const user = randomUUID();
    const statuses: number[] = [];
    let last = { status: 0, text: '', headers: new Headers() };
    for (let i = 0; i < 4; i++) {
      last = await post(s.http, body(user));
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    const json = JSON.parse(last.text);
    expect(json).toMatchObject({
      overallCode: 'OVER_LIMIT',
      statuses: [{ code: 'OVER_LIMIT', currentLimit: { requestsPerUnit: 3, unit: 'MINUTE' } }],
    });
    expect(json.statuses[0].limitRemaining).toBeUndefined();
    expect(json.statuses[0].durationUntilReset).toMatch(/^\d+s$/);
    expect(json.responseHeadersToAdd.map((h: { key: string }) => h.key)).toEqual([
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'X-Reset',
    ]);
    expect(last.headers.get('ratelimit-limit')).toBe('3');
    expect(last.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('OK body: limitRemaining present, default values omitted; any method accepted; snake_case accepted', async () => {
    const r = await post(s.http, body(randomUUID()), 'PUT');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text).statuses[0]).toMatchObject({ code: 'OK', limitRemaining: 2 });
    const snake = await post(
      s.http,
      JSON.stringify({
        domain: 'example',
        hits_addend: '2',
        descriptors: [{ entries: [{ key: 'user', value: randomUUID() }] }],
      }),
    );
    expect(JSON.parse(snake.text).statuses[0].limitRemaining).toBe(1);
  });

  it('400 Bad Request saying what is wrong for an empty body, malformed JSON, unknown fields, wrong types', async () => {
    for (const [payload, reason] of [
      ['', 'empty body'],
      ['{not json', 'not valid JSON'],
      [JSON.stringify({ domain: 'example', descriptors: [], extra: 1 }), "unknown field 'extra'"],
      // the typo of issue 31: `descriptor` for `descriptors`
      [
        JSON.stringify({ domain: 'example', descriptor: [{ entries: [{ key: 'user', value: 'x' }] }] }),
        "unknown field 'descriptor'",
      ],
      [
        JSON.stringify({
          domain: 'example',
          descriptors: [{ entries: [{ key: 'user', value: 'x', other: 1 }] }],
        }),
        "unknown field 'other'",
      ],
      [JSON.stringify({ domain: 5, descriptors: [] }), 'expected a string'],
      [
        JSON.stringify({ domain: 'example', hitsAddend: -1, descriptors: [] }),
        'expected an unsigned integer',
      ],
      [JSON.stringify({ domain: 'example', hitsAddend: 4294967296, descriptors: [] }), 'out of range'],
      // 2^64-1 as a JSON number: the answer names the bound, not the parser's rounded 18446744073709552000
      [
        '{"domain":"example","descriptors":[{"entries":[{"key":"k","value":"v"}],"hits_addend":18446744073709551615}]}',
        'descriptors[0].hits_addend: out of range, at most 9007199254740991',
      ],
      ['[]', 'expected an object'],
    ] as const) {
      const r = await post(s.http, payload);
      expect({ payload, status: r.status }).toEqual({ payload, status: 400 });
      expect(r.text).toMatch(/^Bad Request: .+\n$/);
      expect(r.text).toContain(reason);
      expect(r.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    }
  });

  it('400 Bad Request with the call error for call errors (the message is logged too)', async () => {
    expect(
      await post(
        s.http,
        JSON.stringify({ domain: '', descriptors: [{ entries: [{ key: 'user', value: 'x' }] }] }),
      ),
    ).toMatchObject({
      status: 400,
      text: 'Bad Request: rate limit domain must not be empty\n',
    });
    expect(await post(s.http, JSON.stringify({ domain: 'example' }))).toMatchObject({
      status: 400,
      text: 'Bad Request: rate limit descriptor list must not be empty\n',
    });
    const r = await post(
      s.http,
      JSON.stringify({
        domain: 'example',
        descriptors: [
          { entries: [{ key: 'user', value: 'x' }], limit: { requestsPerUnit: 1, unit: 'UNKNOWN' } },
        ],
      }),
    );
    expect(r).toMatchObject({
      status: 400,
      text: 'Bad Request: rate limit descriptor 0 has a limit override with unit UNKNOWN\n',
    });
    const ok = await post(
      s.http,
      JSON.stringify({
        domain: 'example',
        descriptors: [
          { entries: [{ key: 'user', value: randomUUID() }], limit: { requests_per_unit: 1, unit: 'HOUR' } },
        ],
      }),
    );
    expect(JSON.parse(ok.text).statuses[0]).toMatchObject({
      currentLimit: { requestsPerUnit: 1, unit: 'HOUR' },
    });
  });

  it('GET /healthcheck: 200 OK, 500 when a component is unhealthy; other paths 404', async () => {
    let r = await fetch(`${s.http}/healthcheck`);
    expect([r.status, await r.text()]).toEqual([200, 'OK']);
    s.app.health.set('backend', false);
    r = await fetch(`${s.http}/healthcheck`);
    expect(r.status).toBe(500);
    await r.text();
    s.app.health.set('backend', true);
    r = await fetch(`${s.http}/nope`);
    expect(r.status).toBe(404);
    await r.text();
    r = await fetch(`${s.http}/`);
    expect(r.headers.get('content-type')).toContain('text/html');
    expect(await r.text()).toContain('href="/healthcheck"');
    r = await fetch(`${s.http}/healthcheck`, { method: 'POST' });
    expect([r.status, r.headers.get('allow'), await r.text()]).toEqual([
      405,
      'GET, HEAD',
      'Method Not Allowed\n',
    ]);
  });
});

describe('an unknown domain', () => {
  it('answers OK as upstream and is logged once per domain at warn', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const s = await startApp({ 'rules.yaml': THREE_PER_MINUTE }, {}, { logger });
    try {
      const call = (domain: string) =>
        post(s.http, JSON.stringify({ domain, descriptors: [{ entries: [{ key: 'user', value: 'x' }] }] }));
      for (let i = 0; i < 3; i++) expect((await call('exampel')).status).toBe(200);
      expect((await call('other')).status).toBe(200);
      expect((await call('example')).status).toBe(200);
      const warned = lines
        .map((line) => JSON.parse(line))
        .filter((l) => /unknown rate limit domain/.test(l.msg));
      expect(warned.map((l) => [l.level, l.domain])).toEqual([
        [40, 'exampel'],
        [40, 'other'],
      ]);
    } finally {
      await s.close();
    }
  });
});

describe('HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED', () => {
  it('unhealthy while no domain is loaded, healthy once one is', async () => {
    const s = await startApp({}, { HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: 'true' });
    try {
      expect((await fetch(`${s.http}/healthcheck`)).status).toBe(500);
      const { writeFileSync } = await import('node:fs');
      writeFileSync(`${s.configDir}/a.yaml`, THREE_PER_MINUTE);
      expect(await s.app.configManager.reload()).toBe(true);
      expect((await fetch(`${s.http}/healthcheck`)).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
