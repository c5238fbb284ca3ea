import { describe, expect, it } from 'vitest';
import {
  type IdempotencyBounds,
  IdempotencyRecords,
  type IdempotentAnswer,
} from '../src/idempotency/records.js';

// Issue 41: the stored answers are bounded per credential and in total (count and bytes), the oldest
// dropped first, and expire after the TTL. Pure: the clock is an argument.
const BOUNDS: IdempotencyBounds = { ttlMs: 1_000, maxKeys: 5, maxKeysPerCredential: 3, maxBytes: 1_000_000 };

const answer = (credential: string, storedAt: number, body = '{"data":{}}'): IdempotentAnswer => ({
  requestHash: 'r',
  operationHash: 'o',
  credential,
  body,
  storedAt,
});

describe('idempotency records', () => {
  it('keeps at most maxKeysPerCredential per credential, dropping that credential’s oldest', () => {
    const records = new IdempotencyRecords(BOUNDS);
    expect(records.put('a1', answer('A', 0), 0)).toEqual([]);
    records.put('b1', answer('B', 1), 1);
    records.put('a2', answer('A', 2), 2);
    records.put('a3', answer('A', 3), 3);
    expect(records.put('a4', answer('A', 4), 4)).toEqual(['a1']);
    expect([...records.entries()].map(([key]) => key)).toEqual(['b1', 'a2', 'a3', 'a4']);
    // B's record, older than A's, is not touched by A's bound.
    expect(records.get('b1', 4)).toBeDefined();
  });

  it('keeps at most maxKeys in total, dropping the oldest of anyone', () => {
    const records = new IdempotencyRecords(BOUNDS);
    const keys = ['a1', 'b1', 'c1', 'd1', 'e1'];
    for (const [n, key] of keys.entries()) records.put(key, answer(key[0] as string, n), n);
    expect(records.put('f1', answer('F', 5), 5)).toEqual(['a1']);
    expect(records.size).toBe(5);
  });

  it('keeps the stored answers under maxBytes, oldest first, but never drops the one just put', () => {
    const records = new IdempotencyRecords({ ...BOUNDS, maxBytes: 3_000 });
    records.put('k1', answer('A', 0, 'x'.repeat(1_000)), 0);
    records.put('k2', answer('B', 1, 'x'.repeat(1_000)), 1);
    expect(records.put('k3', answer('C', 2, 'x'.repeat(1_000)), 2)).toEqual(['k1']);
    expect(records.bytes).toBeLessThanOrEqual(3_000);
    // One answer larger than the bound alone: kept (the request that made it is answered from it).
    expect(records.put('big', answer('D', 3, 'x'.repeat(5_000)), 3)).toEqual(['k2', 'k3']);
    expect(records.get('big', 3)?.body).toHaveLength(5_000);
  });

  it('expires records after the TTL, and a record put again moves to the newest', () => {
    const records = new IdempotencyRecords(BOUNDS);
    records.put('k1', answer('A', 0), 0);
    records.put('k2', answer('A', 500), 500);
    expect(records.get('k1', 999)).toBeDefined();
    expect(records.get('k1', 1_000)).toBeUndefined();
    expect(records.put('k3', answer('A', 1_200), 1_200)).toEqual(['k1']);
    records.put('k2', answer('A', 1_300), 1_300); // the answer of a reserved record
    expect([...records.entries()].map(([key]) => key)).toEqual(['k3', 'k2']);
    expect(records.expire(2_250)).toEqual(['k3']);
  });

  it('applies journalled changes as made (no bounds), and enforces them after loading', () => {
    const records = new IdempotencyRecords(BOUNDS);
    for (let n = 0; n < 8; n += 1) records.set(`k${n}`, answer('A', n));
    expect(records.size).toBe(8);
    expect(records.remove('k0')).toBe(true);
    expect(records.enforce()).toEqual(['k1', 'k2', 'k3', 'k4']);
    expect(records.size).toBe(3);
  });
});
