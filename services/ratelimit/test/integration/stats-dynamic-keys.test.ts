import { afterEach, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from './app-harness.js';

const RULES =
  'domain: d\ndescriptors:\n  - key: user\n    rate_limit: { unit: minute, requests_per_unit: 10 }\n';

describe('STATS_MAX_DYNAMIC_KEYS: statistics keys made from request values are bounded', () => {
  const running: RunningApp[] = [];
  afterEach(async () => {
    for (const app of running.splice(0)) await app.close();
  });
  const post = (app: RunningApp, body: unknown) =>
    fetch(`${app.http}/json`, { method: 'POST', body: JSON.stringify(body) });
  const counters = (app: RunningApp) => app.app.registry.snapshot().counters;

  it('unknown domains and limit overrides past the bound count under _overflow', async () => {
    const app = await startApp({ 'r.yaml': RULES }, { STATS_MAX_DYNAMIC_KEYS: '2' });
    running.push(app);
    for (const domain of ['x1', 'x2', 'x3', 'x4']) {
      const answer = await post(app, { domain, descriptors: [{ entries: [{ key: 'user', value: 'a' }] }] });
      expect(answer.status).toBe(200);
    }
    for (const value of ['o1', 'o2', 'o3']) {
      const answer = await post(app, {
        domain: 'd',
        descriptors: [{ entries: [{ key: 'user', value }], limit: { requestsPerUnit: 5, unit: 'MINUTE' } }],
      });
      expect(answer.status).toBe(200);
    }
    const c = counters(app);
    expect(c.get('ratelimit.service.rate_limit.x1.domain_not_found')).toBe(1);
    expect(c.get('ratelimit.service.rate_limit.x2.domain_not_found')).toBe(1);
    expect(c.has('ratelimit.service.rate_limit.x3.domain_not_found')).toBe(false);
    expect(c.get('ratelimit.service.rate_limit._overflow.domain_not_found')).toBe(2);
    expect(c.get('ratelimit.service.rate_limit.d.user_o1.total_hits')).toBe(1);
    expect(c.get('ratelimit.service.rate_limit.d.user_o2.total_hits')).toBe(1);
    expect(c.has('ratelimit.service.rate_limit.d.user_o3.total_hits')).toBe(false);
    expect(c.get('ratelimit.service.rate_limit._overflow.total_hits')).toBe(1);
    expect(c.get('ratelimit.service.stats_keys_overflow')).toBe(3);
    // The override still limits as it should under the shared key.
    const limited = (await (
      await post(app, {
        domain: 'd',
        descriptors: [
          { entries: [{ key: 'user', value: 'o3' }], limit: { requestsPerUnit: 5, unit: 'MINUTE' } },
        ],
      })
    ).json()) as { statuses: { limitRemaining: number }[] };
    expect(limited.statuses[0]!.limitRemaining).toBe(3);
  });
});
