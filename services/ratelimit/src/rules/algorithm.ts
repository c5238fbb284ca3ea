import type { YamlRateLimit } from './yaml-file.js';

/**
 * The per-rule algorithm keys under `rate_limit` (issue 42; not in the reference): `algorithm`
 * (`fixed_window`, the default and the reference's; `sliding_window`; `token_bucket`),
 * `unit_multiplier` (a window of K units) and `burst` (a token bucket's capacity). Validated here
 * when a file loads, with messages naming the rule and the value; pure.
 */
export const ALGORITHMS = ['fixed_window', 'sliding_window', 'token_bucket'] as const;
export type Algorithm = (typeof ALGORITHMS)[number];

/** What the configured backend can count (memcached cannot run every algorithm). */
export interface AlgorithmSupport {
  /** The backend's name in messages, e.g. `memcache`. */
  readonly backend: string;
  readonly supported: ReadonlySet<Algorithm>;
}

export interface RuleAlgorithm {
  readonly algorithm: Algorithm;
  /** `unit_multiplier`, 1 unless set. */
  readonly unitMultiplier: number;
  /** The token bucket's capacity: `burst`, else `requests_per_unit` (also set, unused, for the others). */
  readonly burst: number;
  /** `unit` seconds x `unit_multiplier`. */
  readonly windowSeconds: number;
}

export class AlgorithmError extends Error {}

const isAlgorithm = (name: string): name is Algorithm => (ALGORITHMS as readonly string[]).includes(name);

/**
 * The rule's algorithm settings, or an AlgorithmError naming `fullKey`. `divider` is the unit's
 * seconds (0 for an unlimited rule, which takes none of these keys).
 */
export function ruleAlgorithm(
  rl: YamlRateLimit,
  fullKey: string,
  divider: number,
  support: AlgorithmSupport | undefined,
): RuleAlgorithm {
  const fail = (message: string): never => {
    throw new AlgorithmError(`rule '${fullKey}': ${message}`);
  };
  if (rl.unlimited) {
    if (rl.algorithm !== '') fail(`should not specify algorithm '${rl.algorithm}' when unlimited`);
    if (rl.unitMultiplier !== undefined) fail('should not specify unit_multiplier when unlimited');
    if (rl.burst !== undefined) fail('should not specify burst when unlimited');
    return { algorithm: 'fixed_window', unitMultiplier: 1, burst: 0, windowSeconds: 0 };
  }
  const algorithm = rl.algorithm === '' ? 'fixed_window' : rl.algorithm;
  if (!isAlgorithm(algorithm)) {
    return fail(`unknown algorithm '${algorithm}' (expected fixed_window, sliding_window or token_bucket)`);
  }
  const unitMultiplier = rl.unitMultiplier ?? 1;
  if (unitMultiplier < 1) fail(`unit_multiplier must be at least 1, got ${unitMultiplier}`);
  const windowSeconds = divider * unitMultiplier;
  if (windowSeconds * 1000 > Number.MAX_SAFE_INTEGER)
    fail(`unit_multiplier ${unitMultiplier} makes the window too long`);
  if (rl.burst !== undefined) {
    if (algorithm !== 'token_bucket')
      fail(`burst is only allowed with algorithm token_bucket (algorithm is ${algorithm})`);
    if (rl.burst < 1) fail(`burst must be at least 1, got ${rl.burst}`);
    if (rl.requestsPerUnit === 0) fail('burst needs requests_per_unit above 0 (0 refuses every request)');
  }
  const burst = rl.burst ?? rl.requestsPerUnit;
  if (algorithm === 'token_bucket' && burst * windowSeconds * 1000 > Number.MAX_SAFE_INTEGER) {
    fail(
      `burst ${burst} over a window of ${windowSeconds} s is too large to count exactly (burst x window in ms must stay below 2^53)`,
    );
  }
  if (support && !support.supported.has(algorithm)) {
    fail(`algorithm '${algorithm}' is not supported by the ${support.backend} backend`);
  }
  return { algorithm, unitMultiplier, burst, windowSeconds };
}

/** The `/rlconfig` suffix of a rule that is not a plain fixed window ('' for one, as the reference's line). */
export function algorithmDump(a: RuleAlgorithm): string {
  if (a.algorithm === 'fixed_window' && a.unitMultiplier === 1) return '';
  let out = `, algorithm: ${a.algorithm}`;
  if (a.unitMultiplier !== 1) out += `, unit_multiplier: ${a.unitMultiplier}`;
  if (a.algorithm === 'token_bucket') out += `, burst: ${a.burst}`;
  return out;
}
