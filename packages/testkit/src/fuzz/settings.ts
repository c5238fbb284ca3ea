/**
 * Run size and seed of a fuzz test: `FUZZ_RUNS` (requests per service, replaces the test's fixed
 * default for a longer run) and `FUZZ_SEED` (repeat a failure); without `FUZZ_SEED` each run draws a
 * fresh seed and prints it when a property fails.
 */
export interface FuzzSettings {
  readonly numRuns: number;
  readonly seed: number;
  /** A test timeout that grows with `numRuns` (at most 150 ms a request, never under two minutes). */
  readonly timeoutMs: number;
}

export function fuzzSettings(defaultRuns: number, env: NodeJS.ProcessEnv = process.env): FuzzSettings {
  const parse = (name: string, raw: string | undefined): number | undefined => {
    if (raw === undefined || raw.trim() === '') return undefined;
    const value = Number(raw);
    if (!Number.isSafeInteger(value)) throw new Error(`${name}: ${JSON.stringify(raw)} is not an integer`);
    return value;
  };
  const numRuns = parse('FUZZ_RUNS', env.FUZZ_RUNS) ?? defaultRuns;
  if (numRuns < 1) throw new Error(`FUZZ_RUNS: must be at least 1, got ${numRuns}`);
  const seed = parse('FUZZ_SEED', env.FUZZ_SEED) ?? Math.floor(Math.random() * 2 ** 31);
  return { numRuns, seed, timeoutMs: Math.max(120_000, numRuns * 150) };
}
