import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callShouldRateLimit } from '../../src/cli/client.js';
import { Code } from '../../src/proto/messages.js';
import { type RunningApp, startApp } from './app-harness.js';

/** quota_mode and RESPONSE_DYNAMIC_METADATA through the real gRPC and HTTP servers. */
const CONFIG = `
domain: q
descriptors:
  - key: quota
    quota_mode: true
    metadata: { tier: free, limits: { burst: 2 } }
    rate_limit: { unit: minute, requests_per_unit: 1 }
  - key: other
    quota_mode: true
    metadata: { tier: ignored, limits: { window: minute } }
    rate_limit: { unit: minute, requests_per_unit: 100 }
`;

describe('quota_mode and RESPONSE_DYNAMIC_METADATA end to end', () => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp({ 'q.yaml': CONFIG }, { RESPONSE_DYNAMIC_METADATA: 'true' });
  });
  afterAll(async () => {
    await s.close();
  });

  it('gRPC: an over-limit quota descriptor does not block while another quota descriptor passes; metadata of the passed ones', async () => {
    const user = `u${process.pid}-${Date.now()}`;
    const request = {
      domain: 'q',
      descriptors: [
        { entries: [{ key: 'quota', value: user }] },
        { entries: [{ key: 'other', value: user }] },
      ],
      hitsAddend: 0,
    };
    expect((await callShouldRateLimit(s.grpc, request)).overallCode).toBe(Code.OK);
    const second = await callShouldRateLimit(s.grpc, request);
    expect(second.overallCode).toBe(Code.OK);
    expect(second.statuses.map((x) => x.code)).toEqual([Code.OVER_LIMIT, Code.OK]);
    expect(second.dynamicMetadata).toEqual({
      domain: 'q',
      descriptors: [{ entries: [`quota=${user}`] }, { entries: [`other=${user}`] }],
      metadata: { tier: 'ignored', limits: { window: 'minute' } },
    });
  });

  it('HTTP /json: every quota descriptor over gives 429; dynamicMetadata is a plain JSON object', async () => {
    const user = `h${process.pid}-${Date.now()}`;
    const body = JSON.stringify({ domain: 'q', descriptors: [{ entries: [{ key: 'quota', value: user }] }] });
    expect((await fetch(`${s.http}/json`, { method: 'POST', body })).status).toBe(200);
    const res = await fetch(`${s.http}/json`, { method: 'POST', body });
    expect(res.status).toBe(429);
    const json = (await res.json()) as { overallCode: string; dynamicMetadata: unknown };
    expect(json.overallCode).toBe('OVER_LIMIT');
    expect(json.dynamicMetadata).toEqual({ domain: 'q', descriptors: [{ entries: [`quota=${user}`] }] });
  });
});
