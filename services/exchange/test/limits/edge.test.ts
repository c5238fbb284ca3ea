import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/http/typed.js';
import { MemoryLimiter } from '../../src/limits/memory-limiter.js';
import { accountWithKey } from '../support/accounts.js';
import { clientSignV2, nextNonce, v3Headers } from '../support/signing.js';
import { usePgliteTarget } from '../support/targets.js';
import { appWithLimits } from './support.js';

/**
 * Request limits at the HTTP edge with the in-process limiter on a clock the test moves (limits of
 * support.ts: public 3/min per address, private 6/min per address and 2/min per key).
 */
const target = usePgliteTarget();
// 10 s into a minute window: 50 s until it resets.
const START = Date.UTC(2026, 10, 25, 12, 0, 10);

describe('request limits at the HTTP edge (in-process limiter)', () => {
  const clock = { ms: START };
  let app: App;
  let limiter: MemoryLimiter;
  beforeAll(async () => {
    limiter = new MemoryLimiter({ now: () => clock.ms });
    app = await appWithLimits(target.db(), limiter);
  });
  afterAll(async () => {
    await app?.close();
  });

  const get = (url: string, remoteAddress: string, headers: Record<string, string> = {}) =>
    app.inject({ method: 'GET', url, remoteAddress, headers });

  it('public route: limit headers on each answer, then 429 rate_limited with retry-after; a new window lets it through', async () => {
    clock.ms = START;
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await get('/v3/timestamp', '10.1.0.1'));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 429]);
    expect(answers.map((a) => a.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
    for (const a of answers) {
      expect(a.headers['x-ratelimit-limit']).toBe('3, 3;w=60');
      expect(a.headers['x-ratelimit-reset']).toBe('50');
    }
    const refused = answers[3]!;
    expect(refused.headers['retry-after']).toBe('50');
    expect(refused.json()).toEqual({
      error: {
        code: 1012,
        name: 'rate_limited',
        message: expect.stringContaining('retry after 50 s'),
      },
    });
    expect(answers[0]!.headers['retry-after']).toBeUndefined();
    clock.ms = START + 50_000;
    const next = await get('/v3/timestamp', '10.1.0.1');
    expect(next.statusCode).toBe(200);
    expect(next.headers['x-ratelimit-remaining']).toBe('2');
    expect(next.headers['x-ratelimit-reset']).toBe('60');
  });

  it('counts per address: another client is not affected', async () => {
    clock.ms = START + 120_000;
    for (let i = 0; i < 4; i++) await get('/v3/currencies', '10.1.0.2');
    expect((await get('/v3/currencies', '10.1.0.2')).statusCode).toBe(429);
    expect((await get('/v3/currencies', '10.1.0.3')).statusCode).toBe(200);
  });

  it('counts unknown routes as public (a 404 flood is limited too) and never limits exempt routes', async () => {
    clock.ms = START + 180_000;
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await get('/v3/no-such-route', '10.1.0.4')).statusCode);
    expect(codes).toEqual([404, 404, 404, 429]);
    for (let i = 0; i < 10; i++) {
      const health = await get('/health', '10.1.0.4');
      expect(health.statusCode).toBe(200);
      expect(health.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });

  it('private route, unauthenticated: counted per address before the signature is checked (6, then 429 instead of 401)', async () => {
    clock.ms = START + 240_000;
    const codes = [];
    for (let i = 0; i < 7; i++) {
      const unsigned = await app.inject({
        method: 'POST',
        url: '/v3/auth/me',
        payload: {},
        remoteAddress: '10.1.0.5',
      });
      codes.push(unsigned.statusCode);
    }
    expect(codes).toEqual([401, 401, 401, 401, 401, 401, 429]);
    // Public routes have their own rule: the same address still reads market data.
    expect((await get('/v3/timestamp', '10.1.0.5')).statusCode).toBe(200);
  });

  it('private route, authenticated: counted per API key whatever the address; headers of the tighter rule', async () => {
    clock.ms = START + 300_000;
    const user = await accountWithKey(target.db(), ['read']);
    const other = await accountWithKey(target.db(), ['read']);
    const signed = (who: typeof user, address: string) =>
      app.inject({
        method: 'POST',
        url: '/v3/auth/r/wallets',
        payload: '{}',
        remoteAddress: address,
        headers: v3Headers(who.apiKey, who.secret, '/v3/auth/r/wallets', '{}'),
      });
    const first = await signed(user, '10.2.0.1');
    expect(first.statusCode).toBe(200);
    // Per key 2/min (1 left) is tighter than per address 6/min (5 left).
    expect(first.headers['x-ratelimit-limit']).toBe('2, 2;w=60');
    expect(first.headers['x-ratelimit-remaining']).toBe('1');
    expect((await signed(user, '10.2.0.2')).statusCode).toBe(200);
    const third = await signed(user, '10.2.0.3');
    expect(third.statusCode).toBe(429);
    expect(third.json().error).toMatchObject({ code: 1012, name: 'rate_limited' });
    expect(third.json().error.message).toContain('with this API key');
    expect(third.headers['retry-after']).toBe('50');
    // Another key from an address the first one used is not limited by the first key's count.
    expect((await signed(other, '10.2.0.1')).statusCode).toBe(200);
  });

  it('v2 private routes are private too: counted per key', async () => {
    clock.ms = START + 360_000;
    const user = await accountWithKey(target.db(), ['read']);
    const call = () => {
      const params = { access_key: user.apiKey, tonce: nextNonce() };
      const signature = clientSignV2(user.secret, 'GET', '/api/v2/members/me', params);
      const query = new URLSearchParams({ ...params, signature }).toString();
      return get(`/api/v2/members/me?${query}`, '10.3.0.1');
    };
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await call()).statusCode);
    expect(codes).toEqual([200, 200, 429]);
  });
});

describe('request limits: memory stays bounded (in-process limiter)', () => {
  const clock = { ms: START };
  let open: App;
  let closed: App;
  beforeAll(async () => {
    open = await appWithLimits(target.db(), new MemoryLimiter({ now: () => clock.ms, maxCounters: 3 }));
    closed = await appWithLimits(target.db(), new MemoryLimiter({ now: () => clock.ms, maxCounters: 3 }), {
      failureMode: 'closed',
    });
  });
  afterAll(async () => {
    await open?.close();
    await closed?.close();
  });

  it('past the most counters, the failure mode decides; ended windows are swept', async () => {
    for (const address of ['10.9.0.1', '10.9.0.2', '10.9.0.3']) {
      await open.inject({ url: '/v3/timestamp', remoteAddress: address });
      await closed.inject({ url: '/v3/timestamp', remoteAddress: address });
    }
    const openAnswer = await open.inject({ url: '/v3/timestamp', remoteAddress: '10.9.0.4' });
    expect(openAnswer.statusCode).toBe(200);
    expect(openAnswer.headers['x-ratelimit-limit']).toBeUndefined();
    const closedAnswer = await closed.inject({ url: '/v3/timestamp', remoteAddress: '10.9.0.4' });
    expect(closedAnswer.statusCode).toBe(503);
    expect(closedAnswer.headers['retry-after']).toBe('1');
    expect(closedAnswer.json().error).toMatchObject({ code: 1011, name: 'unavailable' });
    // A minute later the three counters' windows have ended: swept, room again.
    clock.ms += 60_000;
    expect((await closed.inject({ url: '/v3/timestamp', remoteAddress: '10.9.0.4' })).statusCode).toBe(200);
  });
});

describe('client address behind a trusted proxy', () => {
  const clock = { ms: START };
  let behindProxy: App;
  let direct: App;
  beforeAll(async () => {
    behindProxy = await appWithLimits(target.db(), new MemoryLimiter({ now: () => clock.ms }), {
      trustedProxies: ['10.0.0.0/8'],
    });
    direct = await appWithLimits(target.db(), new MemoryLimiter({ now: () => clock.ms }));
  });
  afterAll(async () => {
    await behindProxy?.close();
    await direct?.close();
  });

  const viaProxy = (app: App, client: string, proxy = '10.0.0.9') =>
    app.inject({ url: '/v3/timestamp', remoteAddress: proxy, headers: { 'x-forwarded-for': client } });

  it('with TRUSTED_PROXIES, the address the proxy forwards is counted, each client on its own', async () => {
    for (let i = 0; i < 3; i++) expect((await viaProxy(behindProxy, '203.0.113.1')).statusCode).toBe(200);
    expect((await viaProxy(behindProxy, '203.0.113.1')).statusCode).toBe(429);
    expect((await viaProxy(behindProxy, '203.0.113.2')).statusCode).toBe(200);
  });

  it('x-forwarded-for from an untrusted peer is ignored: a client cannot pick its own address', async () => {
    const codes = [];
    for (let i = 0; i < 4; i++) {
      codes.push((await viaProxy(behindProxy, `198.51.100.${i}`, '192.0.2.7')).statusCode);
    }
    expect(codes).toEqual([200, 200, 200, 429]);
  });

  it('by default the socket address is counted, whatever x-forwarded-for says', async () => {
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await viaProxy(direct, `198.51.100.${i}`)).statusCode);
    expect(codes).toEqual([200, 200, 200, 429]);
  });
});
