import { describe, expect, it } from 'vitest';
import { authorizationScope, CacheKeyMemo, cacheKey, stableStringify } from '../src/cache/key.js';
import { backoffMs, freshness, tagsInData, touches } from '../src/cache/policy.js';
import { DocumentAnalyser, typeOfField, typeOfMutationField } from '../src/graphql/document.js';

describe('document analysis', () => {
  const analyser = new DocumentAnalyser({ maxEntries: 2 });

  it('normalises whitespace, commas and comments away', () => {
    const a = analyser.analyse('query A { posts(first: 2) { nodes { id } } }', null);
    const b = analyser.analyse('# list\nquery A {\n  posts(first: 2) {\n    nodes { id }\n  }\n}', null);
    expect(a.ok && b.ok).toBe(true);
    if (a.ok && b.ok) expect(a.operation.normalised).toBe(b.operation.normalised);
  });

  it('selects the operation by name and reports its kind, root fields and type tags', () => {
    const doc =
      'query Q { posts { nodes { id categories { nodes { name } } } } } mutation M { createPost(input: {}) { post { id } } }';
    const query = analyser.analyse(doc, 'Q');
    const mutation = analyser.analyse(doc, 'M');
    expect(query.ok && query.operation.kind).toBe('query');
    expect(query.ok && [...query.operation.typeTags].sort()).toEqual(['Category', 'Post']);
    expect(mutation.ok && mutation.operation.rootFields).toEqual(['createPost']);
    expect(mutation.ok && mutation.operation.typeTags).toEqual(['Post']);
    expect(analyser.analyse(doc, null)).toMatchObject({ ok: false, code: 'OPERATION_NOT_FOUND' });
    expect(analyser.analyse('{ posts {', null)).toMatchObject({ ok: false, code: 'GRAPHQL_PARSE_FAILED' });
  });

  it('guesses types from field names the WPGraphQL way', () => {
    expect(typeOfField('posts')).toBe('Post');
    expect(typeOfField('categories')).toBe('Category');
    expect(typeOfField('author')).toBe('User');
    expect(typeOfField('nodes')).toBeUndefined();
    expect(typeOfMutationField('updateCategory')).toBe('Category');
    expect(typeOfMutationField('login')).toBeUndefined();
  });
});

describe('cache key', () => {
  it('does not depend on the order of variables but does on their values and the scope', () => {
    expect(stableStringify({ b: [1, { d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[1,{"c":2,"d":1}]}');
    const k1 = cacheKey('{a}', null, { x: 1, y: 2 }, 'public');
    expect(cacheKey('{a}', null, { y: 2, x: 1 }, 'public')).toBe(k1);
    expect(cacheKey('{a}', null, { x: 1, y: 3 }, 'public')).not.toBe(k1);
    expect(cacheKey('{a}', null, { x: 1, y: 2 }, authorizationScope('Bearer t'))).not.toBe(k1);
    expect(cacheKey('{a}', null, undefined, 'public')).toBe(cacheKey('{a}', null, {}, 'public'));
    expect(authorizationScope(undefined)).toBe('public');
  });

  it('keeps the format of the keys on disk (cache files of earlier versions stay valid)', () => {
    expect(cacheKey('{posts{id}}', 'Q', { b: 2, a: 1 }, 'public')).toBe(
      '7ff11c70bdb1471b8a1235627be5e437fe8358769e1d1ade25a964f3a74155b6',
    );
  });

  it('is remembered for repeated requests: same keys as cacheKey, bounded in entries', () => {
    const memo = new CacheKeyMemo(3);
    const cases: Array<[string, string | null, unknown, string]> = [
      ['{a}', null, { x: 1, y: 2 }, 'public'],
      ['{a}', null, { y: 2, x: 1 }, 'public'],
      ['{a}', null, { x: 1, y: 3 }, 'public'],
      ['{a}', 'A', null, 'public'],
      ['{a}', null, null, authorizationScope('Bearer t')],
      ['{b}', null, undefined, 'public'],
    ];
    for (let round = 0; round < 2; round += 1) {
      for (const [document, operationName, variables, scope] of cases) {
        expect(memo.keyOf(document, operationName, variables, scope)).toBe(
          cacheKey(document, operationName, variables, scope),
        );
      }
    }
    expect(memo.size).toBe(3);
    // An input longer than the limit is hashed every time, not kept.
    const small = new CacheKeyMemo(10, 16);
    expect(small.keyOf(`{${'a'.repeat(40)}}`, null, null, 'public')).toBe(
      cacheKey(`{${'a'.repeat(40)}}`, null, null, 'public'),
    );
    expect(small.size).toBe(0);
  });
});

describe('policy', () => {
  it('is fresh within the TTL, stale within stale-if-error, then unusable', () => {
    const entry = { storedAt: 1000, invalidated: false };
    expect(freshness(entry, 1500, 1000, 5000)).toBe('fresh');
    expect(freshness(entry, 2500, 1000, 5000)).toBe('stale');
    expect(freshness(entry, 7000, 1000, 5000)).toBe('unusable');
    expect(freshness({ storedAt: 1000, invalidated: true }, 1001, 1000, 5000)).toBe('stale');
  });

  it('collects ids and typenames from data and matches mutation tags', () => {
    const tags = tagsInData({
      posts: { nodes: [{ id: 'cG9zdDox', __typename: 'Post', author: { node: { id: 'dXNlcjox' } } }] },
    });
    expect([...tags].sort()).toEqual(['Post', 'id:cG9zdDox', 'id:dXNlcjox']);
    expect(touches(['Post'], new Set(['Tag']))).toBe(false);
    expect(touches(['Post', 'id:x'], new Set(['id:x']))).toBe(true);
    expect(touches(['Anything'], new Set(['*']))).toBe(true);
  });

  it('doubles the backoff up to the ceiling', () => {
    expect([1, 2, 3, 4, 10].map((n) => backoffMs(n, 100, 500))).toEqual([100, 200, 400, 500, 500]);
  });
});
