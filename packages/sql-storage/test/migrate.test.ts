import { describe, expect, it } from 'vitest';
import { splitStatements } from '../src/migrate.js';

describe('migration statements', () => {
  it('splits at line-ending semicolons, keeps function bodies whole and drops comment lines', () => {
    const sql = [
      '-- a table',
      'CREATE TABLE t (a int);',
      'CREATE FUNCTION f(n int) RETURNS int LANGUAGE plpgsql AS $$',
      'BEGIN',
      '  -- inside the body',
      '  n := n + 1;',
      '  RETURN n;',
      'END $$;',
      "COMMENT ON TABLE t IS 'x';",
    ].join('\n');
    expect(splitStatements(sql)).toEqual([
      'CREATE TABLE t (a int)',
      'CREATE FUNCTION f(n int) RETURNS int LANGUAGE plpgsql AS $$\nBEGIN\n  -- inside the body\n  n := n + 1;\n  RETURN n;\nEND $$',
      "COMMENT ON TABLE t IS 'x'",
    ]);
  });
});
