import { makeExecutableSchema } from '@graphql-tools/schema';
import type {
  BlogState,
  PageRecord,
  PostRecord,
  TermRecord,
  UserRecord,
} from '@platform/blog-graphql/domain/model';
import type { BlogContext } from '@platform/blog-graphql/graphql/context';
import { queryResolvers } from '@platform/blog-graphql/graphql/query-resolvers';
import { typeDefs } from '@platform/blog-graphql/graphql/schema';
import { type DocumentNode, execute, type GraphQLSchema, parse, validate } from 'graphql';
import type { QueuedPayload } from '../queue/store.js';
import type { LocalCollections, LocalRecord } from './optimistic.js';

/**
 * Offline answers beyond the cache: a query the cache cannot answer while the upstream is offline is
 * executed against the blog's own schema and query resolvers (services/blog-graphql, reused, not
 * copied) over the local copy of its data (LOCAL_DB_PATH, filled by /local/sync), as an anonymous
 * caller (published content only). Not answered (undefined): no sync yet, a document the schema
 * refuses, or any error while executing.
 */

const num = (value: unknown): number => (typeof value === 'number' ? value : Number(value));
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const idsOf = (connection: unknown): number[] => {
  const nodes = (connection as { nodes?: Array<{ databaseId?: unknown }> } | undefined)?.nodes;
  return Array.isArray(nodes) ? nodes.map((node) => num(node.databaseId)).filter(Number.isFinite) : [];
};
const withId = (record: LocalRecord) => Number.isFinite(num(record['databaseId']));

function term(record: LocalRecord): TermRecord {
  return {
    databaseId: num(record['databaseId']),
    name: text(record['name']),
    slug: text(record['slug']),
    description: text(record['description']),
  };
}

/** The blog's state rebuilt from the synchronised collections (the sync fetches every stored field). */
export function blogStateOf(collections: LocalCollections): BlogState {
  const posts: PostRecord[] = collections.posts.filter(withId).map((record) => ({
    databaseId: num(record['databaseId']),
    title: text(record['title']),
    content: text(record['content']),
    excerpt: text(record['excerpt']),
    slug: text(record['slug']),
    date: text(record['date']),
    modified: text(record['modified']),
    status: text(record['status']) as PostRecord['status'],
    authorId: num((record['author'] as { node?: { databaseId?: unknown } } | null)?.node?.databaseId),
    categoryIds: idsOf(record['categories']),
    tagIds: idsOf(record['tags']),
  }));
  const pages: PageRecord[] = collections.pages.filter(withId).map((record) => ({
    databaseId: num(record['databaseId']),
    title: text(record['title']),
    content: text(record['content']),
    slug: text(record['slug']),
    date: text(record['date']),
    modified: text(record['modified']),
    status: text(record['status']) as PageRecord['status'],
    authorId: Number.NaN, // not synchronised: a page's author answers null
  }));
  const users: UserRecord[] = collections.authors.filter(withId).map((record) => ({
    databaseId: num(record['databaseId']),
    name: text(record['name']),
    slug: text(record['slug']),
    description: text(record['description']),
  }));
  return {
    nextId: 0,
    users,
    posts,
    pages,
    categories: collections.categories.filter(withId).map(term),
    tags: collections.tags.filter(withId).map(term),
  };
}

export class LocalAnswers {
  private readonly schema: GraphQLSchema = makeExecutableSchema({ typeDefs, resolvers: [queryResolvers] });
  /** The state rebuilt for the last collections seen (rebuilt when a sync replaces them). */
  private built: { source: LocalCollections; state: BlogState } | undefined;
  private readonly documents = new Map<string, DocumentNode | null>();

  constructor(
    private readonly collections: () => LocalCollections,
    private readonly lastUpdated: () => string | null,
  ) {}

  /** The answer and the local copy's age in seconds, or undefined when the local copy cannot answer. */
  async answer(
    payload: QueuedPayload,
    now: number,
  ): Promise<{ body: string; ageSeconds: number } | undefined> {
    const updated = this.lastUpdated();
    if (updated === null) return undefined;
    const document = this.document(payload.query);
    if (document === null) return undefined;
    const source = this.collections();
    if (this.built?.source !== source) this.built = { source, state: blogStateOf(source) };
    // The resolvers read `context.store.current` only; the blog's store class is not needed here.
    const context = {
      store: { current: this.built.state },
      authenticated: false,
      sentCredentials: false,
      now: () => now,
    } as unknown as BlogContext;
    try {
      const result = await execute({
        schema: this.schema,
        document,
        variableValues: payload.variables ?? undefined,
        operationName: payload.operationName ?? undefined,
        contextValue: context,
      });
      if (result.errors?.length || !result.data) return undefined;
      return {
        body: JSON.stringify({ data: result.data }),
        ageSeconds: Math.max(0, Math.floor((now - Date.parse(updated)) / 1000)),
      };
    } catch {
      return undefined;
    }
  }

  /** Parsed and validated against the blog's schema (remembered, at most 500); null: not answerable. */
  private document(query: string): DocumentNode | null {
    const known = this.documents.get(query);
    if (known !== undefined) return known;
    let document: DocumentNode | null;
    try {
      const parsed = parse(query);
      document = validate(this.schema, parsed).length === 0 ? parsed : null;
    } catch {
      document = null;
    }
    if (this.documents.size >= 500) this.documents.clear();
    this.documents.set(query, document);
    return document;
  }
}
