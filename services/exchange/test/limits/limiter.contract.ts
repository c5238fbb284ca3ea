import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuleVerdict } from '../../src/limits/fixed-window.js';
import type { LimitCheck, RequestLimiter } from '../../src/limits/limiter.js';
import { parseLimits } from '../../src/limits/limits-file.js';
import type { LimitRule, LimitsConfig } from '../../src/limits/rules.js';

/** The rules every implementation is tested with (day windows: no rollover during a run, practically). */
export const CONTRACT_LIMITS: LimitsConfig = (() => {
  const parsed = parseLimits(`
domain: exchange-contract
rules:
  - { name: per-address, routes: private, per: address, unit: day, requests_per_unit: 3 }
  - { name: per-key, routes: private, per: key, unit: day, requests_per_unit: 5 }
  - { name: per-second, routes: public, per: address, unit: second, requests_per_unit: 1 }
`);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.config;
})();

const rule = (name: string): LimitRule => {
  const found = CONTRACT_LIMITS.rules.find((r) => r.name === name);
  if (!found) throw new Error(name);
  return found;
};

export interface LimiterTarget {
  readonly limiter: RequestLimiter;
  stop(): Promise<void>;
}

/**
 * What every RequestLimiter must do, whoever decides (the in-process limiter, services/ratelimit).
 * `start` builds one over CONTRACT_LIMITS, on the real clock.
 */
export function limiterContract(name: string, start: (config: LimitsConfig) => Promise<LimiterTarget>): void {
  describe(`request limiter contract: ${name}`, () => {
    let target: LimiterTarget;
    beforeAll(async () => {
      target = await start(CONTRACT_LIMITS);
    });
    afterAll(async () => {
      await target?.stop();
    });

    async function one(check: LimitCheck): Promise<RuleVerdict> {
      const outcome = await target.limiter.check([check]);
      if (outcome.kind !== 'decided') throw new Error(`limiter failed: ${outcome.message}`);
      const verdict = outcome.verdicts[0];
      if (!verdict) throw new Error('no verdict');
      return verdict;
    }

    it('counts every hit and refuses the first one past the limit, with limit, remaining and reset', async () => {
      const subject = randomUUID();
      const verdicts: RuleVerdict[] = [];
      for (let i = 0; i < 5; i++) verdicts.push(await one({ rule: rule('per-address'), subject }));
      expect(verdicts.map((v) => [v.allowed, v.remaining])).toEqual([
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
        [false, 0],
      ]);
      for (const v of verdicts) {
        expect(v).toMatchObject({ limit: 3, windowSeconds: 86_400, rule: { name: 'per-address' } });
        expect(v.resetSeconds).toBeGreaterThanOrEqual(1);
        expect(v.resetSeconds).toBeLessThanOrEqual(86_400);
      }
    });

    it('keeps one counter per subject and per rule', async () => {
      const a = randomUUID();
      const b = randomUUID();
      for (let i = 0; i < 4; i++) await one({ rule: rule('per-address'), subject: a });
      expect((await one({ rule: rule('per-address'), subject: a })).allowed).toBe(false);
      expect(await one({ rule: rule('per-address'), subject: b })).toMatchObject({
        allowed: true,
        remaining: 2,
      });
      // The same subject string under another rule is another counter.
      expect(await one({ rule: rule('per-key'), subject: a })).toMatchObject({ allowed: true, remaining: 4 });
    });

    it('decides several checks in one call, a verdict per check in order', async () => {
      const subject = randomUUID();
      for (let i = 0; i < 3; i++) await one({ rule: rule('per-address'), subject });
      const outcome = await target.limiter.check([
        { rule: rule('per-address'), subject },
        { rule: rule('per-key'), subject },
      ]);
      expect(outcome).toMatchObject({
        kind: 'decided',
        verdicts: [
          { rule: { name: 'per-address' }, allowed: false, limit: 3, remaining: 0 },
          { rule: { name: 'per-key' }, allowed: true, limit: 5, remaining: 4 },
        ],
      });
    });

    it('concurrent checks of many requests: each request gets its own verdicts, exactly the limit is allowed', async () => {
      // Request i checks its own address (exhausted beforehand for even i) and its own key (hit i % 4
      // times beforehand), so a verdict handed to the wrong request shows.
      const requests = Array.from({ length: 30 }, (_, i) => ({
        i,
        address: randomUUID(),
        key: randomUUID(),
      }));
      for (const r of requests) {
        if (r.i % 2 === 0)
          for (let n = 0; n < 3; n++) await one({ rule: rule('per-address'), subject: r.address });
        for (let n = 0; n < r.i % 4; n++) await one({ rule: rule('per-key'), subject: r.key });
      }
      const outcomes = await Promise.all(
        requests.map((r) =>
          target.limiter.check([
            { rule: rule('per-address'), subject: r.address },
            { rule: rule('per-key'), subject: r.key },
          ]),
        ),
      );
      outcomes.forEach((outcome, i) => {
        expect(outcome, `request ${i}`).toMatchObject({
          kind: 'decided',
          verdicts: [
            { rule: { name: 'per-address' }, allowed: i % 2 === 1, remaining: i % 2 === 1 ? 2 : 0 },
            { rule: { name: 'per-key' }, allowed: true, remaining: 4 - (i % 4) },
          ],
        });
      });
      // And one shared subject hit by 30 requests at once: exactly 3 allowed.
      const shared = randomUUID();
      const many = await Promise.all(
        requests.map(() => target.limiter.check([{ rule: rule('per-address'), subject: shared }])),
      );
      const allowed = many.map((o) => (o.kind === 'decided' ? o.verdicts[0]?.allowed : 'failed'));
      expect(allowed.filter((a) => a === true)).toHaveLength(3);
      expect(allowed.filter((a) => a === false)).toHaveLength(27);
    });

    it('starts a fresh count when the window ends', async () => {
      const subject = randomUUID();
      // Two hits within one second refuse the second (retried if they straddled a second boundary).
      let refused: RuleVerdict | undefined;
      for (let i = 0; i < 5 && !refused; i++) {
        const second = await one({ rule: rule('per-second'), subject });
        if (!second.allowed) refused = second;
      }
      expect(refused).toMatchObject({ allowed: false, windowSeconds: 1, resetSeconds: 1 });
      // Then, within a deadline, the next window lets it through again.
      const deadline = Date.now() + 5_000;
      let again: RuleVerdict | undefined;
      while (Date.now() < deadline) {
        again = await one({ rule: rule('per-second'), subject });
        if (again.allowed) break;
        await delay(25);
      }
      expect(again).toMatchObject({ allowed: true, remaining: 0 });
    });
  });
}
