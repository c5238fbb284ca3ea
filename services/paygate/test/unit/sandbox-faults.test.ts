import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/load.js';
import { DEFAULT_CATALOG_FILE } from '../../src/config.js';
import { DEFAULT_FAULTS, parseCallbackFaults, planFaults } from '../../src/sandbox/faults.js';

describe('callback faults (the fault-injecting sandbox)', () => {
  it('reads on, off and lists, and names what is wrong', () => {
    expect(parseCallbackFaults('on')).toEqual({ ok: true, faults: DEFAULT_FAULTS });
    const some = parseCallbackFaults('duplicate=0.5, delay_ms=5-10 ,seed=42');
    expect(some).toMatchObject({ ok: true, faults: { duplicate: 0.5, drop: 0, delayMs: [5, 10], seed: 42 } });
    expect(parseCallbackFaults('on,drop=1')).toMatchObject({
      ok: true,
      faults: { drop: 1, duplicate: 0.25 },
    });
    expect(parseCallbackFaults('off')).toMatchObject({ ok: true, faults: { drop: 0, duplicate: 0 } });
    for (const [text, problem] of [
      ['drop=2', /drop is a probability/],
      ['delay_ms=9-3', /delay_ms/],
      ['delay_ms=0-999999', /delay_ms/],
      ['lose=0.1', /unknown fault "lose"/],
      ['seed=x', /seed/],
      ['drop', /name=value/],
    ] as const) {
      const parsed = parseCallbackFaults(text);
      expect(parsed.ok, text).toBe(false);
      if (!parsed.ok) expect(parsed.problem).toMatch(problem);
    }
  });

  it("decides each attempt's fate from the seed and the callback alone, at about the asked rates", () => {
    const keys = Array.from({ length: 2000 }, (_, i) => `exchange/invoice/${i}/1/0`);
    const plans = keys.map((key) => planFaults(DEFAULT_FAULTS, 7, key));
    expect(keys.map((key) => planFaults(DEFAULT_FAULTS, 7, key))).toEqual(plans);
    expect(keys.map((key) => planFaults(DEFAULT_FAULTS, 8, key))).not.toEqual(plans);
    const rate = (hit: (p: (typeof plans)[number]) => boolean) => plans.filter(hit).length / plans.length;
    expect(rate((p) => p.dropForMs !== undefined)).toBeCloseTo(0.25, 1);
    expect(rate((p) => p.duplicate !== 'none')).toBeCloseTo(0.25, 1);
    expect(rate((p) => p.duplicate === 'alongside')).toBeCloseTo(0.125, 1);
    expect(rate((p) => p.delayMs > 0)).toBeCloseTo(0.25, 1);
    expect(rate((p) => p.reorder)).toBeCloseTo(0.25, 1);
    expect(rate((p) => p.signWithPrevious)).toBeCloseTo(0.3, 1);
    for (const plan of plans) {
      if (plan.dropForMs !== undefined) expect(plan.dropForMs).toBeGreaterThanOrEqual(50);
      expect(plan.delayMs).toBeLessThanOrEqual(300);
    }
    const off = parseCallbackFaults('off');
    if (!off.ok) throw new Error(off.problem);
    expect(keys.some((key) => planFaults(off.faults, 7, key).dropForMs !== undefined)).toBe(false);
  });

  it('is off unless asked, and refused for a live merchant, naming the setting', () => {
    expect(
      loadCatalog(DEFAULT_CATALOG_FILE, new Map()).merchants.get('exchange')?.callbackFaults,
    ).toBeUndefined();
    const variable = 'PAYGATE_MERCHANT_CALLBACK_FAULTS_EXCHANGE';
    const on = loadCatalog(DEFAULT_CATALOG_FILE, new Map([[variable, 'on,seed=3']]));
    expect(on.merchants.get('exchange')?.callbackFaults).toMatchObject({ drop: 0.25, seed: 3 });
    expect(() => loadCatalog(DEFAULT_CATALOG_FILE, new Map([[variable, 'drop=3']]))).toThrow(
      /PAYGATE_MERCHANT_CALLBACK_FAULTS_EXCHANGE: drop is a probability/,
    );
    const dir = mkdtempSync(path.join(tmpdir(), 'paygate-faults-'));
    try {
      const live = path.join(dir, 'gateway.yaml');
      writeFileSync(
        live,
        readFileSync(DEFAULT_CATALOG_FILE, 'utf8').replace('test_mode: true', 'test_mode: false'),
      );
      const env = new Map([['PAYGATE_MERCHANT_SECRET_EXCHANGE', 'a-live-secret-of-its-own']]);
      expect(loadCatalog(live, env).merchants.get('exchange')?.testMode).toBe(false);
      expect(() => loadCatalog(live, new Map([...env, [variable, 'on']]))).toThrow(
        /PAYGATE_MERCHANT_CALLBACK_FAULTS_EXCHANGE: callback faults are for test merchants only/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
