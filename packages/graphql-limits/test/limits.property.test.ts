import { seedName, testSeeds } from '@platform/testkit/seeds';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkCost, DEFAULT_QUERY_LIMITS, inspectQuery, type QueryLimits } from '../src/limits.js';

/**
 * Properties of the limits: any query nested beyond QUERY_MAX_DEPTH is refused (however the nesting
 * is spelled: fields, inline fragments, named fragments, aliases, arguments), and the queries a blog
 * client sends (WPGraphQL shapes, fragments, aliases, pages up to 100) always pass. Fixed seeds;
 * TEST_SEED repeats a failure.
 */

const SCALARS = ['id', 'databaseId', 'title', 'slug', 'uri', 'date', 'excerpt', 'content', 'status', 'name'];

/** One level of nesting, as a client may spell it: `inner` goes where the next level goes. */
const level = fc.oneof(
  fc.constantFrom(
    (inner: string) => `posts(first: 100) { nodes { ${inner} } }`,
    (inner: string) => `author { node { ${inner} } }`,
    (inner: string) => `a: categories { edges { node { ${inner} } } }`,
    (inner: string) => `... on Post { tags(last: 3) { nodes { ${inner} } } }`,
    (inner: string) => `post(id: "cG9zdDox", idType: ID) { ${inner} }`,
  ),
  fc.constantFrom(...SCALARS).map((scalar) => (inner: string) => `${scalar} viewer { ${inner} }`),
);

/** The levels wrapped one inside the other around a leaf `id`. */
function nested(levels: Array<(inner: string) => string>): string {
  return levels.reduceRight((inner, wrap) => wrap(inner), 'id');
}

/** Field depth counted from the text: the deepest brace nesting of selection sets. */
function fieldDepth(query: string): number {
  // Braces nest one per selection set; inline fragments open one without a field.
  let depth = 0;
  let deepest = 0;
  let inlineAt: number[] = [];
  const tokens = query.match(/\.\.\. on \w+ \{|\{|\}/g) ?? [];
  for (const token of tokens) {
    if (token === '}') {
      if (inlineAt.at(-1) === depth) inlineAt = inlineAt.slice(0, -1);
      depth -= 1;
    } else {
      depth += 1;
      if (token !== '{') inlineAt.push(depth);
      deepest = Math.max(deepest, depth - inlineAt.length);
    }
  }
  return deepest;
}

const realQuery = fc
  .record({
    first: fc.integer({ min: 1, max: 100 }),
    alias: fc.boolean(),
    scalars: fc.subarray(SCALARS, { minLength: 1 }),
    author: fc.boolean(),
    categories: fc.boolean(),
    tags: fc.option(fc.integer({ min: 1, max: 100 })),
    fragment: fc.boolean(),
    pageInfo: fc.boolean(),
    variables: fc.boolean(),
  })
  .map((shape) => {
    const fields = [
      shape.fragment ? '...PostFields' : shape.scalars.join(' '),
      shape.author ? 'author { node { id name slug } }' : '',
      shape.categories ? 'categories { nodes { id name slug } }' : '',
      shape.tags !== null ? `tags(first: ${shape.tags}) { nodes { name } }` : '',
    ].join(' ');
    const first = shape.variables ? '$first' : String(shape.first);
    const query = [
      `query Blog${shape.variables ? '($first: Int, $after: String)' : ''} {`,
      `${shape.alias ? 'latest: ' : ''}posts(first: ${first}${shape.variables ? ', after: $after' : ''}) {`,
      `nodes { ${fields} } ${shape.pageInfo ? 'pageInfo { hasNextPage endCursor }' : ''} }`,
      'menu: categories(first: 100) { nodes { id name uri } } }',
      shape.fragment ? `fragment PostFields on Post { ${shape.scalars.join(' ')} }` : '',
    ].join('\n');
    return { query, variables: shape.variables ? { first: shape.first, after: null } : {} };
  });

describe.each(testSeeds([28, 1411]).map((seed) => [seedName(seed), seed] as const))(
  'limits, %s',
  (_name, seed) => {
    it('refuses every query nested beyond QUERY_MAX_DEPTH, and never throws', () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 30 }),
          fc.array(level, { minLength: 1, maxLength: 40 }),
          fc.boolean(),
          (maxDepth, levels, viaFragment) => {
            const limits: QueryLimits = { ...DEFAULT_QUERY_LIMITS, maxDepth };
            const body = nested(levels);
            const query = viaFragment ? `{ ...Root } fragment Root on RootQuery { ${body} }` : `{ ${body} }`;
            const depth = fieldDepth(`{ ${body} }`);
            const inspection = inspectQuery(query, null, limits);
            if (depth > maxDepth) {
              expect(inspection.ok).toBe(false);
              if (!inspection.ok) {
                expect(inspection.refusal).toMatchObject({ code: 'QUERY_LIMIT_EXCEEDED' });
                expect(['depth', 'nesting']).toContain(
                  inspection.refusal.code === 'QUERY_LIMIT_EXCEEDED' ? inspection.refusal.limit : '',
                );
              }
            } else if (inspection.ok) {
              expect(inspection.operation?.depth).toBe(depth);
            }
          },
        ),
        { seed, numRuns: 300 },
      );
    });

    it('lets real blog queries through with the default limits', () => {
      fc.assert(
        fc.property(realQuery, ({ query, variables }) => {
          const inspection = inspectQuery(query, 'Blog', DEFAULT_QUERY_LIMITS);
          if (!inspection.ok) throw new Error(`${inspection.refusal.message}\n${query}`);
          expect(inspection.operation).toBeDefined();
          if (inspection.operation) {
            expect(checkCost(inspection.operation, variables, DEFAULT_QUERY_LIMITS)).toBeUndefined();
          }
        }),
        { seed, numRuns: 300 },
      );
    });
  },
);
