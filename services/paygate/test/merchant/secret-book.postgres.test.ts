import type { Sql } from '@platform/sql-storage/database';
import { describe, expect, it } from 'vitest';
import type { Merchant } from '../../src/catalog/catalog.js';
import { SecretBook } from '../../src/secrets/book.js';
import { usePostgresTarget } from '../support/targets.js';

// The merchant secrets every signed request and callback needs, read through a short cache: when
// it expires under load, the concurrent requests share one read instead of each sending its own.
const target = usePostgresTarget();

/** The real database, counting the statements sent and failing the next ones when told. */
function counted(db: Sql): { sql: Sql; reads: () => number; failNext: (n: number) => void } {
  let reads = 0;
  let failing = 0;
  const sql: Sql = {
    query(text, params) {
      reads += 1;
      if (failing > 0) {
        failing -= 1;
        return Promise.reject(new Error('connection lost'));
      }
      return db.query(text, params);
    },
  };
  return { sql, reads: () => reads, failNext: (n) => (failing = n) };
}

const merchant = { id: 'exchange', secret: 'configured-secret' } as Merchant;

describe('merchant secrets cache', () => {
  it('sends one read for many concurrent requests when the cache expires, and reads again after a failed read', async () => {
    const db = counted(target.db());
    let now = 1_000_000;
    const book = new SecretBook(db.sql, () => now, 1_000);
    const first = await Promise.all(Array.from({ length: 32 }, () => book.accepted(merchant)));
    expect(db.reads()).toBe(1);
    expect(new Set(first.map((s) => s.join()))).toEqual(new Set(['configured-secret']));
    now += 500;
    await Promise.all(Array.from({ length: 32 }, () => book.signing(merchant)));
    expect(db.reads()).toBe(1);
    now += 1_000;
    db.failNext(1);
    const failed = await Promise.allSettled(Array.from({ length: 8 }, () => book.signing(merchant)));
    expect(failed.every((r) => r.status === 'rejected')).toBe(true);
    expect(db.reads()).toBe(2);
    expect(await book.signing(merchant)).toBe('configured-secret');
    expect(db.reads()).toBe(3);
  });
});
