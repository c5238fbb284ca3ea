import { getIntrospectionQuery } from 'graphql';
import { describe, expect, it } from 'vitest';
import { estimateCost } from '../src/cost.js';
import { jsonDepth } from '../src/json-depth.js';
import {
  checkCost,
  checkJsonDepth,
  DEFAULT_QUERY_LIMITS,
  type Inspection,
  inspectQuery,
  type QueryLimits,
} from '../src/limits.js';
import { parseQueryLimits, QueryLimitSettingError } from '../src/settings.js';

const LIMITS = DEFAULT_QUERY_LIMITS;
const UNBOUNDED: QueryLimits = {
  ...LIMITS,
  maxDepth: 1000,
  maxBreadth: Number.MAX_VALUE,
  maxCost: Number.MAX_SAFE_INTEGER,
  maxTokens: 10_000_000,
  maxDirectives: 1_000_000,
};

/** The issue's query: `levels` nested `posts(first:100){ nodes{ author{ node{ ...`. */
export function issueQuery(levels: number): string {
  let inner = 'id';
  for (let level = 0; level < levels; level += 1) {
    inner = `posts(first:100){ nodes{ author{ node{ ${inner} } } } }`;
  }
  return `{ ${inner} }`;
}

function compiled(query: string, limits: QueryLimits = UNBOUNDED) {
  const inspection: Inspection = inspectQuery(query, null, limits);
  if (!inspection.ok) throw new Error(inspection.refusal.message);
  if (inspection.operation === undefined) throw new Error('no operation');
  return inspection.operation;
}

const cost = (query: string, variables: Record<string, unknown> = {}) =>
  estimateCost(compiled(query).root, variables, LIMITS);

describe('cost: the estimated result size', () => {
  it('multiplies list sizes down the nesting', () => {
    expect(cost('{ post(id: 1) { title } }')).toBe(2);
    expect(cost('{ posts(first: 100) { nodes { title } } }')).toBe(1 + 100 * (1 + 1));
    expect(cost('{ posts(first: 2) { nodes { categories(first: 3) { nodes { name } } } } }')).toBe(
      1 + 2 * (1 + 1 + 3 * (1 + 1)),
    );
  });

  it('takes the default page for a connection without first/last, caps at the largest page, reads variables', () => {
    expect(cost('{ posts { nodes { id } } }')).toBe(1 + 10 * 2);
    expect(cost('{ posts(first: 100000) { nodes { id } } }')).toBe(1 + 100 * 2);
    expect(cost('query ($n: Int) { posts(first: $n) { nodes { id } } }', { n: 5 })).toBe(1 + 5 * 2);
    expect(cost('query ($n: Int) { posts(last: $n) { nodes { id } } }', {})).toBe(1 + 10 * 2);
    expect(cost('{ posts(first: -5) { nodes { id } } }')).toBe(1);
    // A connection selected through fragments is still a page of a list.
    expect(cost('{ posts { ... on C { nodes { id } } } }')).toBe(1 + 10 * (1 + 1));
    expect(cost('{ posts { ...P } } fragment P on C { edges { node { id } } }')).toBe(1 + 10 * (1 + 1 + 1));
  });

  it('counts every alias of a field, and every spread of a fragment', () => {
    expect(cost('{ a: posts(first: 100) { nodes { id } } b: posts(first: 100) { nodes { id } } }')).toBe(
      2 * (1 + 100 * 2),
    );
    expect(
      cost(
        'query { posts(first: 10) { nodes { ...P ... on Post { slug } } } } fragment P on Post { id title }',
      ),
    ).toBe(1 + 10 * (1 + 2 + 1));
  });

  it('refuses the issue query at 12 levels: cost far beyond the limit, and too deep', () => {
    // Its brackets nest 50 deep: refused before it is even parsed.
    const refused = inspectQuery(issueQuery(12), null, LIMITS);
    expect(refused).toMatchObject({ ok: false, refusal: { code: 'QUERY_LIMIT_EXCEEDED', limit: 'nesting' } });
    expect(inspectQuery(issueQuery(6), null, LIMITS)).toMatchObject({
      ok: false,
      refusal: { limit: 'depth' },
    });
    const operation = compiled(issueQuery(12));
    expect(operation.depth).toBe(49);
    const byCost = checkCost(operation, {}, LIMITS);
    expect(byCost).toMatchObject({ code: 'QUERY_LIMIT_EXCEEDED', limit: 'cost', max: LIMITS.maxCost });
    expect(byCost?.message).toMatch(/\d\.\d\de\+24 fields in all; the limit is 100000 \(QUERY_MAX_COST\)/);
    // Two levels are within depth and cost; three exceed the cost.
    expect(checkCost(compiled(issueQuery(2), LIMITS), {}, LIMITS)).toBeUndefined();
    expect(checkCost(compiled(issueQuery(3), LIMITS), {}, LIMITS)).toMatchObject({ limit: 'cost' });
  });
});

describe('fragments', () => {
  it('compiles a fragment once however often it is spread (a 2^40 expansion stays cheap)', () => {
    // F0 spreads F1 twice, F1 spreads F2 twice, ... : 2^40 expanded fields, 40 definitions.
    const levels = 40;
    const fragments = Array.from({ length: levels }, (_, i) =>
      i === levels - 1
        ? `fragment F${i} on Post { id }`
        : `fragment F${i} on Post { a${i}: author { node { id } } ...F${i + 1} ...F${i + 1} }`,
    ).join('\n');
    const query = `{ post(id: 1) { ...F0 } }\n${fragments}`;
    const started = performance.now();
    const operation = compiled(query);
    const estimated = estimateCost(operation.root, {}, LIMITS);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(estimated).toBeGreaterThan(2 ** 40);
    expect(checkCost(operation, {}, LIMITS)).toMatchObject({ limit: 'cost' });
    // Breadth counts the merged fields of the widest selection set: 2^39 + ... within `post`.
    expect(inspectQuery(query, null, LIMITS)).toMatchObject({ ok: false, refusal: { limit: 'breadth' } });
  });

  it('refuses fragment cycles and unknown fragments without looping', () => {
    expect(
      inspectQuery(
        '{ post(id: 1) { ...A } } fragment A on Post { ...B } fragment B on Post { ...A }',
        null,
        LIMITS,
      ),
    ).toMatchObject({ ok: false, refusal: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    expect(
      inspectQuery('{ post(id: 1) { ...A } } fragment A on Post { id ...A }', null, LIMITS),
    ).toMatchObject({
      ok: false,
      refusal: { code: 'GRAPHQL_VALIDATION_FAILED', message: 'Cannot spread fragment "A" within itself' },
    });
    expect(inspectQuery('{ post(id: 1) { ...Missing } }', null, LIMITS)).toMatchObject({
      ok: false,
      refusal: { code: 'GRAPHQL_VALIDATION_FAILED' },
    });
  });
});

describe('the shape limits', () => {
  it('depth: field nesting, fragments included', () => {
    expect(compiled('{ a { b { c } } }').depth).toBe(3);
    expect(compiled('{ a { ...F } } fragment F on A { b { c { d } } }').depth).toBe(4);
  });

  it('breadth: 10,000 aliases in one selection set are refused', () => {
    const aliases = Array.from({ length: 10_000 }, (_, i) => `a${i}: __typename`).join(' ');
    const refused = inspectQuery(`{ ${aliases} }`, null, { ...LIMITS, maxTokens: 1_000_000 });
    expect(refused).toMatchObject({
      ok: false,
      refusal: { limit: 'breadth', measured: 10_000, max: LIMITS.maxBreadth },
    });
    // With the default token limit the text itself is refused first, before parsing.
    expect(inspectQuery(`{ ${aliases} }`, null, LIMITS)).toMatchObject({
      ok: false,
      refusal: { limit: 'tokens', max: LIMITS.maxTokens },
    });
  });

  it('tokens and bracket nesting are refused before parsing (no recursion, no RangeError)', () => {
    const deep = `${'{a'.repeat(100_000)}${'}'.repeat(100_000)}`;
    expect(inspectQuery(deep, null, LIMITS)).toMatchObject({
      ok: false,
      refusal: { code: 'QUERY_LIMIT_EXCEEDED', limit: 'nesting' },
    });
    const huge = `{ ${'a '.repeat(200_000)}}`;
    expect(inspectQuery(huge, null, LIMITS)).toMatchObject({ ok: false, refusal: { limit: 'tokens' } });
    const operations = Array.from({ length: 5_000 }, (_, i) => `query Q${i} { a }`).join(' ');
    expect(inspectQuery(operations, 'Q1', LIMITS)).toMatchObject({ ok: false, refusal: { limit: 'tokens' } });
  });

  it('directives: repeated directives are refused', () => {
    const query = `{ a ${'@include(if: true) '.repeat(60)} }`;
    expect(inspectQuery(query, null, LIMITS)).toMatchObject({
      ok: false,
      refusal: { limit: 'directives', measured: 51, max: 50 },
    });
  });

  it('syntax errors are parse failures, as graphql-js words them', () => {
    expect(inspectQuery('{ posts( }', null, LIMITS)).toMatchObject({
      ok: false,
      refusal: { code: 'GRAPHQL_PARSE_FAILED', message: 'Syntax Error: Expected Name, found "}".' },
    });
    expect(inspectQuery('{ "unterminated }', null, LIMITS)).toMatchObject({
      ok: false,
      refusal: { code: 'GRAPHQL_PARSE_FAILED' },
    });
  });
});

describe('real queries pass', () => {
  it("GraphiQL's full introspection query", () => {
    for (const query of [
      getIntrospectionQuery(),
      getIntrospectionQuery({
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
      }),
    ]) {
      const inspection = inspectQuery(query, null, LIMITS);
      expect(inspection.ok).toBe(true);
      if (inspection.ok && inspection.operation) {
        expect(checkCost(inspection.operation, {}, LIMITS)).toBeUndefined();
      }
    }
  });

  it('a WPGraphQL-shaped query with fragments, aliases and first: 100 lists', () => {
    const query = /* GraphQL */ `
      query Home($first: Int = 100, $after: String) {
        recent: posts(first: $first, after: $after) {
          nodes { ...PostCard categories(first: 100) { nodes { ...Term } } tags { nodes { ...Term } } }
          pageInfo { hasNextPage endCursor }
        }
        menu: categories(first: 100) { nodes { ...Term count } }
        viewer { name }
      }
      fragment PostCard on Post {
        id databaseId title slug uri date excerpt status
        author { node { id name slug } }
        ... on Post { modified }
      }
      fragment Term on Category { id name slug uri }
    `;
    const inspection = inspectQuery(query, 'Home', LIMITS);
    expect(inspection.ok).toBe(true);
    if (inspection.ok && inspection.operation) {
      expect(checkCost(inspection.operation, {}, LIMITS)).toBeUndefined();
    }
  });
});

describe('JSON nesting', () => {
  it('measures 20,000 levels without recursion and stops past the limit', () => {
    let deep: unknown = null;
    for (let i = 0; i < 20_000; i += 1) deep = { a: deep };
    expect(jsonDepth(deep, 64)).toBe(65);
    expect(checkJsonDepth({ variables: deep }, LIMITS)).toMatchObject({
      code: 'QUERY_LIMIT_EXCEEDED',
      limit: 'jsonDepth',
      max: 64,
    });
    expect(jsonDepth({ input: { categories: { nodes: [{ slug: 'a' }] } } }, 64)).toBe(5);
    expect(jsonDepth('text', 64)).toBe(0);
  });
});

describe('settings', () => {
  it('reads every limit and names a wrong one', () => {
    expect(parseQueryLimits({})).toEqual(DEFAULT_QUERY_LIMITS);
    expect(parseQueryLimits({ QUERY_MAX_DEPTH: '7', QUERY_MAX_COST: '1000' })).toMatchObject({
      maxDepth: 7,
      maxCost: 1000,
    });
    expect(() => parseQueryLimits({ QUERY_MAX_BREADTH: 'wide' })).toThrow(QueryLimitSettingError);
    expect(() => parseQueryLimits({ REQUEST_MAX_JSON_DEPTH: '0' })).toThrow(/REQUEST_MAX_JSON_DEPTH/);
  });
});
