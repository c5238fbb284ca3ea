import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callShouldRateLimit } from '../../src/cli/client.js';
import { Code, encodeRequest, type RateLimitRequest } from '../../src/proto/messages.js';
import { HEALTH_NOT_SERVING, HEALTH_SERVICE, HEALTH_SERVING } from '../../src/transport/grpc-services.js';
import { type RunningApp, startApp, THREE_PER_MINUTE } from './app-harness.js';

const request = (user: string): RateLimitRequest => ({
  domain: 'example',
  descriptors: [{ entries: [{ key: 'user', value: user }] }],
  hitsAddend: 0,
});

function healthCheck(address: string, service: string): Promise<{ status: number }> {
  const Client = grpc.makeGenericClientConstructor(HEALTH_SERVICE, 'Health');
  const client = new Client(address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    Check(r: { service: string }, cb: grpc.requestCallback<{ status: number }>): void;
  };
  return new Promise((resolve, reject) =>
    client.Check({ service }, (error, response) => {
      client.close();
      if (error || !response) reject(error);
      else resolve(response);
    }),
  );
}

describe('gRPC ShouldRateLimit and health (real server, real client)', () => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp({ 'rules.yaml': THREE_PER_MINUTE });
  });
  afterAll(async () => {
    await s.close();
  });

  it('OK, OK, OK, OVER_LIMIT, OVER_LIMIT for a 3-per-minute rule', async () => {
    const user = randomUUID();
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) codes.push((await callShouldRateLimit(s.grpc, request(user))).overallCode);
    expect(codes).toEqual([Code.OK, Code.OK, Code.OK, Code.OVER_LIMIT, Code.OVER_LIMIT]);
    const r = await callShouldRateLimit(s.grpc, request(user));
    expect(r.statuses[0]).toMatchObject({
      code: Code.OVER_LIMIT,
      currentLimit: { requestsPerUnit: 3, unit: 2 },
      limitRemaining: 0,
    });
    expect(r.statuses[0]!.durationUntilResetSeconds).toBeGreaterThan(0);
    const stats = s.app.registry.snapshot().counters;
    expect(stats.get('ratelimit_server.ShouldRateLimit.total_requests')).toBeGreaterThanOrEqual(6);
  });

  it('unlimited rule answers 4294967295 remaining', async () => {
    const r = await callShouldRateLimit(s.grpc, {
      domain: 'example',
      descriptors: [{ entries: [{ key: 'free', value: 'x' }] }],
      hitsAddend: 0,
    });
    expect(r.statuses[0]).toEqual({
      code: Code.OK,
      limitRemaining: 4294967295,
      currentLimit: undefined,
      durationUntilResetSeconds: undefined,
    });
  });

  it('call errors are status UNKNOWN with the reference message', async () => {
    await expect(
      callShouldRateLimit(s.grpc, { domain: '', descriptors: [], hitsAddend: 0 }),
    ).rejects.toMatchObject({
      code: grpc.status.UNKNOWN,
      details: 'rate limit domain must not be empty',
    });
    await expect(
      callShouldRateLimit(s.grpc, { domain: 'example', descriptors: [], hitsAddend: 0 }),
    ).rejects.toMatchObject({
      code: grpc.status.UNKNOWN,
      details: 'rate limit descriptor list must not be empty',
    });
    await expect(
      callShouldRateLimit(s.grpc, {
        domain: 'example',
        descriptors: [{ entries: [{ key: 'user', value: 'x' }], hitsAddend: 2 ** 40 }],
        hitsAddend: 0,
      }),
    ).rejects.toMatchObject({
      code: grpc.status.UNKNOWN,
      details: 'rate limit descriptor 0 hits_addend exceeds 4294967295',
    });
    expect(
      s.app.registry.snapshot().counters.get('ratelimit.service.call.should_rate_limit.service_error'),
    ).toBe(3);
  });

  it('malformed protobuf gets an error status and the server keeps serving', async () => {
    const client = new grpc.Client(s.grpc, grpc.credentials.createInsecure());
    const error = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.makeUnaryRequest(
        '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from([0x12, 0x05, 0x0a]),
        (e) => resolve(e),
      ),
    );
    client.close();
    expect(error?.code).toBe(grpc.status.INTERNAL);
    expect((await callShouldRateLimit(s.grpc, request(randomUUID()))).overallCode).toBe(Code.OK);
  });

  it('unknown protobuf fields are skipped (protobuf rules), extra bytes of a known request still decode', async () => {
    const bytes = Buffer.concat([
      Buffer.from(encodeRequest(request(randomUUID()))),
      Buffer.from([0xf8, 0x07, 0x01]),
    ]);
    const client = new grpc.Client(s.grpc, grpc.credentials.createInsecure());
    const error = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.makeUnaryRequest(
        '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
        (b: Buffer) => b,
        (b: Buffer) => b,
        bytes,
        (e) => resolve(e),
      ),
    );
    client.close();
    expect(error).toBeNull();
  });

  it('grpc.health.v1 Check mirrors health; unknown service is NOT_FOUND', async () => {
    expect(await healthCheck(s.grpc, 'ratelimit')).toEqual({ status: HEALTH_SERVING });
    expect(await healthCheck(s.grpc, '')).toEqual({ status: HEALTH_SERVING });
    await expect(healthCheck(s.grpc, 'other')).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    s.app.health.set('backend', false);
    expect(await healthCheck(s.grpc, 'ratelimit')).toEqual({ status: HEALTH_NOT_SERVING });
    s.app.health.set('backend', true);
  });
});
