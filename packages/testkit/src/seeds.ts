/**
 * Seeds for a randomized test. `TEST_SEED` (one integer or a comma-separated list) replaces the fixed
 * seeds, to repeat a failure; otherwise the fixed seeds run and, in CI (`CI` set), one fresh seed too,
 * so each CI run explores a case no one chose. Name each case after its seed (see `seedName`), so a
 * failure prints the seed that repeats it.
 */
export function testSeeds(fixed: readonly number[], env: NodeJS.ProcessEnv = process.env): number[] {
  const given = env.TEST_SEED?.trim();
  if (given) {
    return given.split(',').map((part) => {
      const seed = Number(part.trim());
      if (!Number.isSafeInteger(seed))
        throw new Error(`TEST_SEED: ${JSON.stringify(part)} is not an integer`);
      return seed;
    });
  }
  const fresh = env.CI ? [Math.floor(Math.random() * 2 ** 31)] : [];
  return [...fixed, ...fresh];
}

/** A test name carrying its seed and how to run it again. */
export function seedName(seed: number): string {
  return `seed ${seed} (repeat with TEST_SEED=${seed})`;
}
