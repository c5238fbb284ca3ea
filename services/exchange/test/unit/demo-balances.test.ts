import { expect, it } from 'vitest';
import { DEFAULT_REFERENCE_FILE } from '../../src/config.js';
import { loadReferenceData } from '../../src/reference/load.js';
import { DEMO_BALANCES } from '../../src/seed.js';

it('the demo account is funded in every currency of the bundled reference data (the README says so)', () => {
  const reference = loadReferenceData(DEFAULT_REFERENCE_FILE);
  const unfunded = reference.currencies.map((c) => c.code).filter((code) => !(code in DEMO_BALANCES));
  expect(unfunded).toEqual([]);
});
