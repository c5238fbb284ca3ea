import {
  type BlogState,
  fromGlobalId,
  type GlobalIdType,
  type PageRecord,
  type PostRecord,
  type TermRecord,
  toGlobalId,
  type UserRecord,
} from '../domain/model.js';
import { type Connection, type ConnectionArgs, connectionOf as sliceOf } from '../domain/pagination.js';
import type { BlogContext } from './context.js';

/** Read resolvers. Anonymous callers see published content only; an authenticated caller sees all. */

type Args = ConnectionArgs & Record<string, unknown>;

function visible<T extends { status: string }>(items: readonly T[], context: BlogContext): T[] {
  return context.authenticated ? [...items] : items.filter((item) => item.status === 'publish');
}

function newestFirst<T extends { date: string; databaseId: number }>(items: T[]): T[] {
  return items.sort((a, b) => (a.date === b.date ? b.databaseId - a.databaseId : a.date < b.date ? 1 : -1));
}

function byName<T extends { name: string; databaseId: number }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => a.name.localeCompare(b.name) || a.databaseId - b.databaseId);
}

/** A page of a list, charged to the request's list budget (limits/list-budget.ts, issue 28). */
function connectionOf<T extends { databaseId: number }>(
  context: BlogContext,
  items: readonly T[],
  args: ConnectionArgs,
): Connection<T> {
  const page = sliceOf(items, args);
  // Past the budget a list resolves empty; the plugin answers the request with one error instead.
  if (context.listBudget && !context.listBudget.charge(page.nodes.length)) return sliceOf([], args);
  return page;
}

function state(context: BlogContext): Readonly<BlogState> {
  return context.store.current;
}

function postsOf(context: BlogContext, predicate: (post: PostRecord) => boolean): PostRecord[] {
  // A spent budget skips the filtering and sorting.
  if (context.listBudget?.exhausted) return [];
  return newestFirst(visible(state(context).posts, context).filter(predicate));
}

function lookup<T extends { databaseId: number; slug: string }>(
  items: readonly T[],
  type: GlobalIdType,
  id: string,
  idType: string,
  extra?: (item: T) => string,
): T | undefined {
  switch (idType) {
    case 'SLUG':
      return items.find((item) => item.slug === id);
    case 'NAME':
      return items.find((item) => extra?.(item) === id);
    case 'URI':
      return items.find((item) => id.replace(/\/+$/, '').endsWith(`/${item.slug}`));
    case 'DATABASE_ID':
      return items.find((item) => item.databaseId === Number(id));
    default: {
      const databaseId = fromGlobalId(id, type);
      return items.find((item) => item.databaseId === databaseId);
    }
  }
}

const author = (record: PostRecord | PageRecord, _args: Args, context: BlogContext) => {
  const user = state(context).users.find((item) => item.databaseId === record.authorId);
  return user ? { node: user } : null;
};

function termResolvers(kind: 'categories' | 'tags', idField: string, uriBase: string) {
  const key = kind === 'categories' ? 'categoryIds' : 'tagIds';
  return {
    id: (term: TermRecord) => toGlobalId('term', term.databaseId),
    [idField]: (term: TermRecord) => term.databaseId,
    uri: (term: TermRecord) => `/${uriBase}/${term.slug}/`,
    count: (term: TermRecord, _args: Args, context: BlogContext) =>
      postsOf(context, (post) => post[key].includes(term.databaseId)).length,
    posts: (term: TermRecord, args: Args, context: BlogContext) =>
      connectionOf(
        context,
        postsOf(context, (post) => post[key].includes(term.databaseId)),
        args,
      ),
  };
}

export const queryResolvers = {
  Node: {
    __resolveType: (value: { __typename: string }) => value.__typename,
  },
  DatabaseIdentifier: {
    __resolveType: (value: { __typename: string }) => value.__typename,
  },
  User: {
    id: (user: UserRecord) => toGlobalId('user', user.databaseId),
    userId: (user: UserRecord) => user.databaseId,
    uri: (user: UserRecord) => `/author/${user.slug}/`,
    posts: (user: UserRecord, args: Args, context: BlogContext) =>
      connectionOf(
        context,
        postsOf(context, (post) => post.authorId === user.databaseId),
        args,
      ),
  },
  Post: {
    id: (post: PostRecord) => toGlobalId('post', post.databaseId),
    postId: (post: PostRecord) => post.databaseId,
    uri: (post: PostRecord) => `/${post.slug}/`,
    dateGmt: (post: PostRecord) => post.date,
    modifiedGmt: (post: PostRecord) => post.modified,
    author,
    categories: (post: PostRecord, args: Args, context: BlogContext) =>
      connectionOf(
        context,
        byName(state(context).categories.filter((term) => post.categoryIds.includes(term.databaseId))),
        args,
      ),
    tags: (post: PostRecord, args: Args, context: BlogContext) =>
      connectionOf(
        context,
        byName(state(context).tags.filter((term) => post.tagIds.includes(term.databaseId))),
        args,
      ),
  },
  Page: {
    id: (page: PageRecord) => toGlobalId('post', page.databaseId),
    pageId: (page: PageRecord) => page.databaseId,
    uri: (page: PageRecord) => `/${page.slug}/`,
    dateGmt: (page: PageRecord) => page.date,
    author,
  },
  Category: termResolvers('categories', 'categoryId', 'category'),
  Tag: termResolvers('tags', 'tagId', 'tag'),
  RootQuery: {
    posts: (_root: unknown, args: Args, context: BlogContext) => {
      const where = (args['where'] ?? {}) as Record<string, unknown>;
      const search = typeof where['search'] === 'string' ? where['search'].toLowerCase() : undefined;
      const current = state(context);
      const category = current.categories.find(
        (term) => term.slug === where['categoryName'] || term.databaseId === where['categoryId'],
      );
      const tagSlugs = Array.isArray(where['tagSlugIn']) ? (where['tagSlugIn'] as string[]) : undefined;
      const tagIds =
        tagSlugs && current.tags.filter((t) => tagSlugs.includes(t.slug)).map((t) => t.databaseId);
      const authorUser = current.users.find((user) => user.slug === where['authorName']);
      const status = typeof where['status'] === 'string' ? where['status'].toLowerCase() : undefined;
      const posts = postsOf(context, (post) => {
        if (search && !`${post.title} ${post.content}`.toLowerCase().includes(search)) return false;
        if (
          (where['categoryName'] || where['categoryId']) &&
          !(category && post.categoryIds.includes(category.databaseId))
        )
          return false;
        if (tagIds && !post.tagIds.some((id) => tagIds.includes(id))) return false;
        if (where['authorName'] && post.authorId !== authorUser?.databaseId) return false;
        if (status && post.status !== status) return false;
        return true;
      });
      return connectionOf(context, posts, args);
    },
    post: (_root: unknown, args: Args, context: BlogContext) =>
      lookup(visible(state(context).posts, context), 'post', String(args['id']), String(args['idType'])) ??
      null,
    pages: (_root: unknown, args: Args, context: BlogContext) =>
      connectionOf(context, newestFirst(visible(state(context).pages, context)), args),
    page: (_root: unknown, args: Args, context: BlogContext) =>
      lookup(visible(state(context).pages, context), 'post', String(args['id']), String(args['idType'])) ??
      null,
    categories: (_root: unknown, args: Args, context: BlogContext) =>
      connectionOf(context, terms(context, 'categories', args), args),
    category: (_root: unknown, args: Args, context: BlogContext) =>
      lookup(state(context).categories, 'term', String(args['id']), String(args['idType']), (t) => t.name) ??
      null,
    tags: (_root: unknown, args: Args, context: BlogContext) =>
      connectionOf(context, terms(context, 'tags', args), args),
    tag: (_root: unknown, args: Args, context: BlogContext) =>
      lookup(state(context).tags, 'term', String(args['id']), String(args['idType']), (t) => t.name) ?? null,
    users: (_root: unknown, args: Args, context: BlogContext) =>
      connectionOf(context, byName(state(context).users), args),
    user: (_root: unknown, args: Args, context: BlogContext) =>
      lookup(state(context).users, 'user', String(args['id']), String(args['idType'])) ?? null,
    viewer: (_root: unknown, _args: Args, context: BlogContext) =>
      context.authenticated ? (state(context).users[0] ?? null) : null,
    node: (_root: unknown, args: Args, context: BlogContext) => {
      const id = String(args['id']);
      const current = state(context);
      const postId = fromGlobalId(id, 'post');
      const termId = fromGlobalId(id, 'term');
      const userId = fromGlobalId(id, 'user');
      const post = visible(current.posts, context).find((item) => item.databaseId === postId);
      if (post && !/^\d+$/.test(id)) return { ...post, __typename: 'Post' };
      const page = visible(current.pages, context).find((item) => item.databaseId === postId);
      if (page && !/^\d+$/.test(id)) return { ...page, __typename: 'Page' };
      const category = current.categories.find((item) => item.databaseId === termId);
      if (category && !/^\d+$/.test(id)) return { ...category, __typename: 'Category' };
      const tag = current.tags.find((item) => item.databaseId === termId);
      if (tag && !/^\d+$/.test(id)) return { ...tag, __typename: 'Tag' };
      const user = current.users.find((item) => item.databaseId === userId);
      if (user && !/^\d+$/.test(id)) return { ...user, __typename: 'User' };
      return null;
    },
  },
};

function terms(context: BlogContext, kind: 'categories' | 'tags', args: Args): TermRecord[] {
  if (context.listBudget?.exhausted) return [];
  const where = (args['where'] ?? {}) as Record<string, unknown>;
  const search = typeof where['search'] === 'string' ? where['search'].toLowerCase() : undefined;
  const key = kind === 'categories' ? 'categoryIds' : 'tagIds';
  const published = visible(state(context).posts, context);
  return byName(state(context)[kind]).filter((term) => {
    if (search && !term.name.toLowerCase().includes(search)) return false;
    if (where['hideEmpty'] && !published.some((post) => post[key].includes(term.databaseId))) return false;
    return true;
  });
}
