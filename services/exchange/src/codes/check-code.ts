import { checkCode } from './format.js';

/**
 * `npm run -s check-code -w services/exchange -- <code>`: the offline check of a transfer code
 * (structure and checksum, no lookup). Exit 0 and "valid" when it passes, 1 and the reason otherwise;
 * 2 for a wrong invocation. The code itself is never echoed.
 */
const REASONS = {
  not_a_string: 'no code given',
  shape: 'not nine segments of 5 characters followed by -<CURRENCY>-<MARKER>',
  alphabet: 'a segment has a character outside the transfer code alphabet',
  checksum: 'the checksum does not match',
} as const;

const args = process.argv.slice(2);
if (args.length !== 1) {
  console.error('usage: npm run -s check-code -w services/exchange -- <code>');
  process.exit(2);
}
const checked = checkCode(args[0]);
if (checked.ok) {
  console.log(`valid (${checked.code.currencyToken}, public segment ${checked.code.publicSegment})`);
  process.exit(0);
}
console.log(`invalid: ${REASONS[checked.problem]}`);
process.exit(1);
