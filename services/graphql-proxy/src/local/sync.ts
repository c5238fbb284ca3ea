import type { UpstreamClient } from '../upstream/client.js';
import { hasErrors } from '../upstream/client.js';
import { emptyCollections, type LocalCollections, type LocalRecord } from './optimistic.js';

/**
 * Fetches every collection of the blog from the upstream, page by page, with WPGraphQL field names.
 * Any failure fails the whole sync, so a partial or empty result never replaces the local data.
 */

const PAGE_SIZE = 100;
const MAX_PAGES = 100;

const QUERIES: Readonly<Record<keyof LocalCollections, { root: string; fields: string }>> = {
  posts: {
    root: 'posts',
    fields:
      'id databaseId title slug date modified status excerpt content ' +
      'author { node { id databaseId name slug } } categories { nodes { id databaseId name slug } } ' +
      'tags { nodes { id databaseId name slug } }',
  },
  pages: { root: 'pages', fields: 'id databaseId title slug date modified status content' },
  categories: { root: 'categories', fields: 'id databaseId name slug description count' },
  tags: { root: 'tags', fields: 'id databaseId name slug description count' },
  authors: { root: 'users', fields: 'id databaseId name slug description' },
};

export type SyncResult = { ok: true; collections: LocalCollections } | { ok: false; error: string };

interface PageOf {
  nodes?: LocalRecord[];
  pageInfo?: { hasNextPage?: boolean; endCursor?: string | null };
}

export async function fetchCollections(
  client: UpstreamClient,
  authorization: string | undefined,
): Promise<SyncResult> {
  const collections = emptyCollections();
  for (const [name, spec] of Object.entries(QUERIES) as Array<
    [keyof LocalCollections, (typeof QUERIES)['posts']]
  >) {
    const query =
      `query LocalSync($first: Int!, $after: String) { ${spec.root}(first: $first, after: $after) ` +
      `{ nodes { ${spec.fields} } pageInfo { hasNextPage endCursor } } }`;
    let after: string | null = null;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const outcome = await client.post({
        body: JSON.stringify({ query, variables: { first: PAGE_SIZE, after }, operationName: 'LocalSync' }),
        authorization,
      });
      if (outcome.kind === 'unavailable') return { ok: false, error: outcome.reason };
      if (hasErrors(outcome.body)) {
        return { ok: false, error: `${name}: ${outcome.body.errors?.[0]?.message ?? 'upstream error'}` };
      }
      const connection = (outcome.body.data as Record<string, PageOf> | undefined)?.[spec.root];
      if (!connection || !Array.isArray(connection.nodes)) {
        return { ok: false, error: `${name}: the upstream answer has no ${spec.root}.nodes` };
      }
      collections[name].push(...connection.nodes);
      if (!connection.pageInfo?.hasNextPage || !connection.pageInfo.endCursor) break;
      after = connection.pageInfo.endCursor;
    }
  }
  return { ok: true, collections };
}
