import { setTimeout as sleep } from 'node:timers/promises';

export interface GraphQLAnswer {
  status: number;
  headers: Headers;
  body: {
    data?: Record<string, unknown> | null;
    errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
    extensions?: Record<string, unknown>;
  };
}

export async function gql(
  baseUrl: string,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<GraphQLAnswer> {
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as GraphQLAnswer['body'],
  };
}

export async function getJson<T = Record<string, unknown>>(
  url: string,
  init?: RequestInit,
): Promise<{ status: number; body: T }> {
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as T };
}

/** Polls `check` until it returns a value other than undefined, failing with `what` after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

/** The `title`s of `data.posts.nodes` in an answer (empty when absent). */
export function postTitles(answer: GraphQLAnswer): string[] {
  const posts = answer.body.data?.['posts'] as { nodes?: Array<{ title: string }> } | undefined;
  return (posts?.nodes ?? []).map((post) => post.title);
}
