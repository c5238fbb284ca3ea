import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/http/typed.js';
import { GrpcLimiter } from '../../src/limits/grpc-limiter.js';
import { ratelimitConfigYaml } from '../../src/limits/ratelimit-config.js';
import { usePgliteTarget } from '../support/targets.js';
import { type RatelimitProcess, startRatelimit } from './ratelimit-process.js';
import { appWithLimits, SMALL_LIMITS } from './support.js';

/**
 * The exchange deciding through the real services/ratelimit, and what it does when the service cannot
 * answer: too slow (a listener that accepts and never speaks: the call's deadline ends it) or gone
 * (the service stopped: UNAVAILABLE), under fail-open and fail-closed.
 */
const target = usePgliteTarget();

function limiterFor(address: string, timeoutMs = 2_000): GrpcLimiter {
  return new GrpcLimiter({ target: address, domain: SMALL_LIMITS.domain, timeoutMs });
}

const timestamp = (app: App, remoteAddress = '10.7.0.1') =>
  app.inject({ url: '/v3/timestamp', remoteAddress });

function expectLetThrough(answer: Awaited<ReturnType<typeof timestamp>>): void {
  expect(answer.statusCode).toBe(200);
  expect(answer.headers['x-ratelimit-limit']).toBeUndefined();
}

function expectRefusedUnavailable(answer: Awaited<ReturnType<typeof timestamp>>): void {
  expect(answer.statusCode).toBe(503);
  expect(answer.headers['retry-after']).toBe('1');
  expect(answer.json()).toEqual({
    error: { code: 1011, name: 'unavailable', message: expect.stringContaining('request limits') },
  });
}

describe('services/ratelimit decides over gRPC (real service)', () => {
  let service: RatelimitProcess;
  let app: App;
  beforeAll(async () => {
    service = await startRatelimit(ratelimitConfigYaml(SMALL_LIMITS, 'the test rules'));
    app = await appWithLimits(target.db(), limiterFor(service.grpc), { failureMode: 'closed' });
  });
  afterAll(async () => {
    await app?.close();
    await service?.stop();
  });

  it("429 with the service's limit, remaining and reset in the headers", async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await timestamp(app, '10.7.1.1'));
    // A minute window may roll over between two calls; the 4 calls then span two windows.
    const codes = answers.map((a) => a.statusCode);
    if (codes.includes(429)) expect(codes).toEqual([200, 200, 200, 429]);
    expect(answers[0]!.headers['x-ratelimit-limit']).toBe('3, 3;w=60');
    expect(answers[0]!.headers['x-ratelimit-remaining']).toBe('2');
    const reset = Number(answers[0]!.headers['x-ratelimit-reset']);
    expect(reset).toBeGreaterThanOrEqual(1);
    expect(reset).toBeLessThanOrEqual(60);
    const last = answers[3]!;
    if (last.statusCode === 429) {
      expect(last.json().error).toMatchObject({ code: 1012, name: 'rate_limited' });
      expect(Number(last.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
  });

  it('a rule the service has no limit for is not enforced (the service decides)', async () => {
    const limiter = limiterFor(service.grpc);
    try {
      const outcome = await limiter.check([
        {
          rule: {
            name: 'not-in-service',
            routes: 'public',
            per: 'address',
            unit: 'second',
            requestsPerUnit: 1,
          },
          subject: '10.7.1.2',
        },
      ]);
      expect(outcome).toEqual({ kind: 'decided', verdicts: [undefined] });
    } finally {
      await limiter.close();
    }
  });
});

describe('services/ratelimit too slow: the call deadline (RATELIMIT_TIMEOUT_MS)', () => {
  let blackHole: Server;
  const sockets = new Set<Socket>();
  let address: string;
  let open: App;
  let closed: App;
  beforeAll(async () => {
    // Accepts connections and never answers, as a hung service would.
    blackHole = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const bound = blackHole.address();
    if (!bound || typeof bound === 'string') throw new Error('no port');
    address = `127.0.0.1:${bound.port}`;
    open = await appWithLimits(target.db(), limiterFor(address, 150), { failureMode: 'open' });
    closed = await appWithLimits(target.db(), limiterFor(address, 150), { failureMode: 'closed' });
  });
  afterAll(async () => {
    await open?.close();
    await closed?.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => blackHole?.close(resolve));
  });

  it('the limiter gives up at the deadline with a timeout failure', async () => {
    const limiter = limiterFor(address, 150);
    try {
      const outcome = await limiter.check([{ rule: SMALL_LIMITS.rules[0]!, subject: '10.7.2.1' }]);
      expect(outcome).toMatchObject({ kind: 'failed', reason: 'timeout' });
    } finally {
      await limiter.close();
    }
  });

  it('fail-open lets the request through without limit headers', async () => {
    expectLetThrough(await timestamp(open));
  });

  it('fail-closed answers 503 unavailable with retry-after', async () => {
    expectRefusedUnavailable(await timestamp(closed));
  });
});

describe('services/ratelimit gone: UNAVAILABLE', () => {
  let open: App;
  let closed: App;
  let address: string;
  beforeAll(async () => {
    const service = await startRatelimit(ratelimitConfigYaml(SMALL_LIMITS, 'the test rules'));
    address = service.grpc;
    open = await appWithLimits(target.db(), limiterFor(address), { failureMode: 'open' });
    closed = await appWithLimits(target.db(), limiterFor(address), { failureMode: 'closed' });
    // Both decide through it while it runs...
    expect((await timestamp(open)).headers['x-ratelimit-limit']).toBe('3, 3;w=60');
    expect((await timestamp(closed, '10.7.3.2')).statusCode).toBe(200);
    // ...then it stops.
    await service.stop();
  });
  afterAll(async () => {
    await open?.close();
    await closed?.close();
  });

  it('the limiter reports the service unavailable', async () => {
    const limiter = limiterFor(address);
    try {
      const outcome = await limiter.check([{ rule: SMALL_LIMITS.rules[0]!, subject: '10.7.3.1' }]);
      expect(outcome).toMatchObject({ kind: 'failed', reason: 'unavailable' });
    } finally {
      await limiter.close();
    }
  });

  it('fail-open lets the request through; fail-closed answers 503', async () => {
    expectLetThrough(await timestamp(open));
    expectRefusedUnavailable(await timestamp(closed));
  });
});
