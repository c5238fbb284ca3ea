import { getIntrospectionQuery } from 'graphql';
import { describe, expect, it } from 'vitest';
import { DEVELOPMENT_AUTH_TOKEN } from '../src/config.js';
import { useBlogServer } from './support/blog-server.js';

// Hostile requests at the blog itself (issue 28 item 4): each answers a client error in yoga's
// GraphQL error shape with extensions.code, never a 5xx or INTERNAL_ERROR, and the blog keeps serving.
const blog = useBlogServer('blog-limits-');

interface Answer {
  status: number;
  body: { data?: unknown; errors?: Array<{ message: string; extensions?: Record<string, unknown> }> };
}

async function post(body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${blog.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

const refusedFor = (answer: Answer) => answer.body.errors?.[0]?.extensions;

describe('hostile requests get a client error', () => {
  it('variables nested 20,000 levels deep, in a query, a mutation and a GET', async () => {
    const deep = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
    const query = await post(`{"query":"query ($a: ID) { post(id: $a) { id } }","variables":${deep}}`);
    expect(query.status).toBe(200);
    expect(refusedFor(query)).toMatchObject({ code: 'QUERY_LIMIT_EXCEEDED', limit: 'jsonDepth', max: 64 });
    const nested = `{"input":${`${'{"title":"x","categories":{"nodes":['.repeat(2_000)}{}${']}}'.repeat(2_000)}`}}`;
    const mutation = await post(
      `{"query":"mutation ($input: CreatePostInput!) { createPost(input: $input) { post { id } } }","variables":${nested}}`,
      { authorization: `Bearer ${DEVELOPMENT_AUTH_TOKEN}`, 'idempotency-key': 'deep-1' },
    );
    expect(refusedFor(mutation)).toMatchObject({ code: 'QUERY_LIMIT_EXCEEDED', limit: 'jsonDepth' });
    const params = new URLSearchParams({
      query: 'query ($a: ID) { post(id: $a) { id } }',
      variables: `${'{"a":'.repeat(200)}1${'}'.repeat(200)}`,
    });
    const get = await fetch(`${blog.url}/graphql?${params}`);
    expect(refusedFor({ status: get.status, body: (await get.json()) as Answer['body'] })).toMatchObject({
      code: 'QUERY_LIMIT_EXCEEDED',
    });
  });

  it.each([
    ['tokens', `{ ${'__typename '.repeat(60_000)}}`],
    ['tokens', Array.from({ length: 20_000 }, (_, i) => `query Q${i} { __typename }`).join(' ')],
    ['tokens', `{ ${Array.from({ length: 10_000 }, (_, i) => `a${i}: __typename`).join(' ')} }`],
    ['breadth', `{ ${Array.from({ length: 1_000 }, (_, i) => `a${i}: __typename`).join(' ')} }`],
    ['nesting', `${'{ posts { nodes '.repeat(20_000)}${'} } '.repeat(20_000)}}`],
    ['directives', `{ posts { nodes { id ${'@include(if: true) '.repeat(100)} } } }`],
    ['depth', `{ ${'posts { nodes { author { node { '.repeat(6)} id ${'} } } } '.repeat(6)} }`],
    ['cost', `{ ${'posts(first: 100) { nodes { author { node { '.repeat(3)} id ${'} } } } '.repeat(3)} }`],
  ])('%s: refused before validation and execution', async (limit, query) => {
    const answer = await post(
      JSON.stringify({ query, operationName: query.startsWith('query Q') ? 'Q1' : undefined }),
    );
    expect(answer.status).toBe(200);
    expect(refusedFor(answer)).toMatchObject({ code: 'QUERY_LIMIT_EXCEEDED', limit });
    expect(answer.body.errors?.[0]?.message).toMatch(
      /the limit is \d+ \((QUERY_MAX_\w+|2 x QUERY_MAX_DEPTH \+ 8)\)$/,
    );
  });

  it('a fragment cycle is a validation failure, without looping', async () => {
    const answer = await post(
      JSON.stringify({
        query: '{ posts { nodes { ...A } } } fragment A on Post { id ...B } fragment B on Post { ...A }',
      }),
    );
    expect(refusedFor(answer)).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED' });
  });

  it('answers 400 to a client that accepts application/graphql-response+json, as for other validation errors', async () => {
    const answer = await post(JSON.stringify({ query: `{ ${'a { '.repeat(100)}${'} '.repeat(100)}}` }), {
      accept: 'application/graphql-response+json',
    });
    expect(answer.status).toBe(400);
    expect(refusedFor(answer)).toMatchObject({ code: 'QUERY_LIMIT_EXCEEDED', limit: 'nesting' });
  });
});

describe('real queries pass', () => {
  it("GraphiQL's full introspection query, and a WPGraphQL query with fragments, aliases and first: 100", async () => {
    const introspection = await post(
      JSON.stringify({ query: getIntrospectionQuery({ descriptions: true }) }),
    );
    expect(introspection.body.errors).toBeUndefined();
    const query = `
      query Home($first: Int = 100) {
        recent: posts(first: $first) { nodes { ...Card categories(first: 100) { nodes { name } } } pageInfo { hasNextPage } }
        menu: categories(first: 100) { nodes { name slug count } }
        older: posts(last: 5) { edges { cursor node { ...Card } } }
      }
      fragment Card on Post { id title slug date author { node { name } } tags { nodes { name } } ... on Post { excerpt } }`;
    const home = await post(JSON.stringify({ query }));
    expect(home.body.errors).toBeUndefined();
    expect(home.body.data).toMatchObject({ recent: { nodes: expect.arrayContaining([expect.anything()]) } });
  });
});
