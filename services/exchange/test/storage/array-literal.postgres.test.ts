import { createTestDatabase } from '@platform/testkit/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ArrayElement, arrayLiteral } from '../../src/db/array-literal.js';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';

// The order writer's batch statement passes its arrays as text (src/db/array-literal.ts): each must
// read back element for element as node-postgres's own serialisation would give it, on both databases.
const cases: { readonly type: string; readonly values: readonly ArrayElement[]; readonly back: unknown[] }[] =
  [
    { type: 'bigint', values: [1, 2 ** 53 - 1, -3, 0], back: ['1', String(2 ** 53 - 1), '-3', '0'] },
    {
      type: 'numeric',
      values: ['-0.001', '123456789012345678901234567890', '0'],
      back: ['-0.001', '123456789012345678901234567890', '0'],
    },
    { type: 'int', values: [7, null, 9], back: [7, null, 9] },
    { type: 'boolean', values: [true, false, null], back: [true, false, null] },
    {
      type: 'text',
      values: [
        'buy',
        'NULL',
        'null',
        'a b',
        'x,y',
        '{z}',
        'q"uote',
        'back\\slash',
        '',
        'ünï',
        ' lead',
        null,
        'btc:usd',
      ],
      back: [
        'buy',
        'NULL',
        'null',
        'a b',
        'x,y',
        '{z}',
        'q"uote',
        'back\\slash',
        '',
        'ünï',
        ' lead',
        null,
        'btc:usd',
      ],
    },
    { type: 'text', values: [], back: [] },
  ];

describe('array parameters as text', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let client: pg.Client;
  let lite: Database;
  beforeAll(async () => {
    database = await createTestDatabase('array_literal');
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    // The embedded database as the exchange opens it (in memory).
    lite = await openStorage({ kind: 'pglite', dataDir: undefined });
  });
  afterAll(async () => {
    await client?.end();
    await lite?.close();
    await database?.drop();
  });

  it('reads back as the values on PostgreSQL and PGlite', async () => {
    for (const { type, values, back } of cases) {
      const sql = `SELECT $1::${type}[]${type === 'bigint' || type === 'numeric' ? '::text[]' : ''} AS a`;
      const fromPg = await client.query<{ a: unknown[] }>(sql, [arrayLiteral(values)]);
      expect(fromPg.rows[0]!.a, `${type} on PostgreSQL`).toEqual(back);
      // node-postgres's own serialisation of the same array agrees.
      const reference = await client.query<{ a: unknown[] }>(sql, [
        values.map((v) => (typeof v === 'bigint' ? v.toString() : v)),
      ]);
      expect(reference.rows[0]!.a).toEqual(back);
      const fromLite = await lite.query<{ a: unknown[] }>(sql, [arrayLiteral(values)]);
      expect(fromLite.rows[0]!.a, `${type} on PGlite`).toEqual(back);
    }
  });
});
