import { DEFAULT_QUERY_LIMITS } from '@platform/graphql-limits/limits';
import { seedName, testSeeds } from '@platform/testkit/seeds';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { limitedHandler } from './support/limited-handler.js';

// Through the proxy's handler (issue 28 item 4): a query nested beyond QUERY_MAX_DEPTH, however it is
// spelled, is refused and never reaches the upstream, the queue or the cache; a real blog query always
// goes upstream; variables are refused exactly when they nest beyond REQUEST_MAX_JSON_DEPTH. Fixed
// seeds; TEST_SEED repeats a failure.

const SCALARS = ['id', 'databaseId', 'title', 'slug', 'uri', 'date', 'excerpt', 'name'];

/** One level of field nesting, as a client may spell it (alias, inline fragment, arguments). */
const level = fc.constantFrom(
  (inner: string) => `node { ${inner} }`,
  (inner: string) => `a: author { ${inner} }`,
  (inner: string) => `... on Post { tags(first: 1) { ${inner} } }`,
  (inner: string) => `post(id: "cG9zdDox") { id ${inner} }`,
);

const realQuery = fc
  .record({
    first: fc.integer({ min: 1, max: 100 }),
    scalars: fc.subarray(SCALARS, { minLength: 1 }),
    author: fc.boolean(),
    terms: fc.boolean(),
    fragment: fc.boolean(),
  })
  .map((shape) => {
    const own = shape.fragment ? '...F' : shape.scalars.join(' ');
    const query = [
      `query Q($after: String) { posts(first: ${shape.first}, after: $after) { nodes { ${own}`,
      shape.author ? 'author { node { name } }' : '',
      shape.terms ? 'categories { nodes { name } } tags(first: 100) { nodes { slug } }' : '',
      '} pageInfo { endCursor } } }',
      shape.fragment ? `fragment F on Post { ${shape.scalars.join(' ')} }` : '',
    ].join(' ');
    return query;
  });

const request = (body: unknown) => ({ body, authorization: undefined, idempotencyKey: undefined });
const codeOf = (answer: { body: string | Buffer }) =>
  (JSON.parse(String(answer.body)) as { errors?: Array<{ extensions?: Record<string, unknown> }> })
    .errors?.[0]?.extensions?.['code'];

describe.each(testSeeds([28, 2026]).map((seed) => [seedName(seed), seed] as const))(
  'proxy limits, %s',
  (_name, seed) => {
    it('refuses nesting beyond QUERY_MAX_DEPTH before the upstream, the queue and the cache', async () => {
      const { handler, calls, queue } = await limitedHandler();
      await fc.assert(
        fc.asyncProperty(
          fc.array(level, { minLength: DEFAULT_QUERY_LIMITS.maxDepth + 1, maxLength: 60 }),
          fc.constantFrom('query', 'mutation'),
          async (levels, kind) => {
            const body = levels.reduceRight((inner, wrap) => wrap(inner), 'id');
            const answer = await handler.handle(request({ query: `${kind} { ${body} }` }));
            expect(codeOf(answer)).toBe('QUERY_LIMIT_EXCEEDED');
            expect(answer.headers['x-cache']).toBeUndefined();
          },
        ),
        { seed, numRuns: 150 },
      );
      expect(calls).toHaveLength(0);
      expect(queue.size).toBe(0);
    });

    it('sends every real blog query upstream', async () => {
      await fc.assert(
        fc.asyncProperty(realQuery, async (query) => {
          // A fresh handler each time: its upstream answers `unavailable`, which opens the breaker.
          const { handler, calls } = await limitedHandler();
          const answer = await handler.handle(request({ query, variables: { after: null } }));
          expect(codeOf(answer)).toBe('OFFLINE_CACHE_MISS');
          expect(calls).toHaveLength(1);
        }),
        { seed, numRuns: 150 },
      );
    });

    it('refuses variables exactly when they nest beyond REQUEST_MAX_JSON_DEPTH', async () => {
      const { handler } = await limitedHandler();
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 3 * DEFAULT_QUERY_LIMITS.maxJsonDepth }),
          fc.boolean(),
          async (depth, arrays) => {
            let value: unknown = 'x';
            for (let i = 0; i < depth - 1; i += 1) value = arrays ? [value] : { a: value };
            const answer = await handler.handle(
              request({ query: 'query ($v: ID) { post(id: $v) { id } }', variables: { v: value } }),
            );
            const code = codeOf(answer);
            if (depth > DEFAULT_QUERY_LIMITS.maxJsonDepth) expect(code).toBe('QUERY_LIMIT_EXCEEDED');
            else expect(code).not.toBe('QUERY_LIMIT_EXCEEDED');
          },
        ),
        { seed, numRuns: 100 },
      );
    });
  },
);
