import { describe, expect, it } from 'vitest';
import { BatchInputs } from '../../src/orders/batch-inputs.js';

const moves = (entries: [string, bigint][]) => new Map(entries);

describe('BatchInputs with batches in flight', () => {
  it('remembers what the batches sent will leave, and takes stored values once no later batch moves them', () => {
    const inputs = new BatchInputs();
    inputs.learnBalance('1:btc', 100n);
    const first = moves([['1:btc', -30n]]);
    const second = moves([
      ['1:btc', -20n],
      ['2:btc', 5n],
    ]);
    inputs.sent(first);
    expect(inputs.balance('1:btc')).toBe(70n);
    inputs.sent(second);
    expect(inputs.balance('1:btc')).toBe(50n);
    // Never read: a credit in flight does not make it known.
    expect(inputs.balance('2:btc')).toBeUndefined();
    // The first commits; the stored value (70) ignores the second, still in flight: 50 stays.
    inputs.committed(first, moves([['1:btc', 70n]]));
    expect(inputs.balance('1:btc')).toBe(50n);
    // The second commits; a deposit meanwhile made the stored value 60, which is taken.
    inputs.committed(
      second,
      moves([
        ['1:btc', 60n],
        ['2:btc', 5n],
      ]),
    );
    expect(inputs.balance('1:btc')).toBe(60n);
    expect(inputs.balance('2:btc')).toBe(5n);
  });

  it('forgets what a failed batch relied on and moved', () => {
    const inputs = new BatchInputs();
    inputs.learnBalance('1:btc', 100n);
    inputs.learnBalance('1:uah', 7n);
    inputs.learnBalance('3:uah', 9n);
    inputs.learnKey(4, { v2: 0n, v3: 10n, status: 'usable' });
    const failing = moves([['1:btc', -30n]]);
    inputs.sent(failing);
    inputs.failed(failing, ['1:uah'], [4]);
    expect(inputs.balance('1:btc')).toBeUndefined();
    expect(inputs.balance('1:uah')).toBeUndefined();
    expect(inputs.key(4)).toBeUndefined();
    expect(inputs.balance('3:uah')).toBe(9n);
    // Nothing of it is still counted in flight: a stored value is taken again.
    inputs.committed(moves([]), moves([['1:btc', 80n]]));
    expect(inputs.balance('1:btc')).toBe(80n);
  });
});
