import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../src/postgres.js';

describe('createTestDatabase', () => {
  it('creates an empty private database that drop() removes', async () => {
    const db = await createTestDatabase('tk');
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query('CREATE TABLE t (x int)');
    await client.query('INSERT INTO t VALUES (1)');
    const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM t');
    expect(rows[0]?.n).toBe('1');
    await client.end();
    await db.drop();
    const again = new pg.Client({ connectionString: db.url });
    await expect(again.connect()).rejects.toThrow(/does not exist/);
  });

  it('gives two databases different names', async () => {
    const [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    expect(a.name).not.toBe(b.name);
    await Promise.all([a.drop(), b.drop()]);
  });
});
