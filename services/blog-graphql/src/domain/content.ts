import { type BlogFailure, fail, type Outcome, ok } from './errors.js';
import {
  type BlogState,
  type ContentKind,
  fromGlobalId,
  type PageRecord,
  type PostRecord,
  type PostStatus,
  slugify,
  type TermKind,
  type TermRecord,
  uniqueSlug,
  wpDate,
} from './model.js';

/**
 * Pure create/update/delete operations on a draft of the blog state. The caller applies them to a
 * copy and keeps the copy only when the outcome is ok, so a failed mutation changes nothing.
 */

export interface TermRefInput {
  id?: string | null;
  slug?: string | null;
  name?: string | null;
}

export interface ContentInput {
  id?: string | null;
  title?: string | null;
  content?: string | null;
  excerpt?: string | null;
  slug?: string | null;
  status?: string | null;
  date?: string | null;
  authorId?: string | null;
  categories?: { append?: boolean | null; nodes?: TermRefInput[] | null } | null;
  tags?: { append?: boolean | null; nodes?: TermRefInput[] | null } | null;
}

export interface TermInput {
  id?: string | null;
  name?: string | null;
  slug?: string | null;
  description?: string | null;
}

const STATUSES: Record<string, PostStatus> = {
  PUBLISH: 'publish',
  DRAFT: 'draft',
  PENDING: 'pending',
  PRIVATE: 'private',
};

function parseDate(raw: string | null | undefined, nowMs: number): Outcome<string> {
  if (raw == null) return ok(wpDate(nowMs));
  const parsed = Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(raw) ? raw : `${raw}Z`);
  if (Number.isNaN(parsed)) return fail('BAD_USER_INPUT', `date "${raw}" is not an ISO 8601 date-time`);
  return ok(wpDate(parsed));
}

function resolveTerms(state: BlogState, kind: TermKind, refs: TermRefInput[]): Outcome<number[]> {
  const ids: number[] = [];
  for (const ref of refs) {
    const list = state[kind];
    let found: TermRecord | undefined;
    if (ref.id) {
      const id = fromGlobalId(ref.id, 'term');
      found = list.find((term) => term.databaseId === id);
    } else if (ref.slug) {
      found = list.find((term) => term.slug === ref.slug);
    } else if (ref.name) {
      found = list.find((term) => term.name === ref.name);
    }
    if (found === undefined) {
      const label = ref.id ?? ref.slug ?? ref.name ?? '(empty)';
      return fail(
        'BAD_USER_INPUT',
        `${kind === 'categories' ? 'category' : 'tag'} "${label}" does not exist`,
      );
    }
    if (!ids.includes(found.databaseId)) ids.push(found.databaseId);
  }
  return ok(ids);
}

function findContent(state: BlogState, kind: ContentKind, id: string): Outcome<PostRecord | PageRecord> {
  const databaseId = fromGlobalId(id, 'post');
  const list: Array<PostRecord | PageRecord> = state[kind];
  const record = list.find((item) => item.databaseId === databaseId);
  if (record === undefined)
    return fail('NOT_FOUND', `No ${kind === 'posts' ? 'post' : 'page'} exists with the id ${id}`);
  return ok(record);
}

function applyContentFields(
  state: BlogState,
  kind: ContentKind,
  record: PostRecord | PageRecord,
  input: ContentInput,
  nowMs: number,
): BlogFailure | undefined {
  if (input.title != null) record.title = input.title;
  if (input.content != null) record.content = input.content;
  if (input.excerpt != null && 'excerpt' in record) record.excerpt = input.excerpt;
  if (input.status != null) {
    const status = STATUSES[input.status.toUpperCase()];
    if (status === undefined) return fail('BAD_USER_INPUT', `status "${input.status}" is not a post status`);
    record.status = status;
  }
  if (input.date != null) {
    const date = parseDate(input.date, nowMs);
    if (!date.ok) return date;
    record.date = date.value;
  }
  if (input.authorId != null) {
    const authorId = fromGlobalId(input.authorId, 'user');
    if (!state.users.some((user) => user.databaseId === authorId)) {
      return fail('BAD_USER_INPUT', `author "${input.authorId}" does not exist`);
    }
    record.authorId = authorId as number;
  }
  if (input.slug != null || input.title != null) {
    const wanted = input.slug != null ? slugify(input.slug) : slugify(record.title);
    if (input.slug != null || record.slug === '')
      record.slug = uniqueSlug(wanted, state[kind], record.databaseId);
  }
  if ('categoryIds' in record) {
    for (const [field, kindOfTerm] of [
      ['categories', 'categories'],
      ['tags', 'tags'],
    ] as const) {
      const refs = input[field];
      if (refs?.nodes == null) continue;
      const resolved = resolveTerms(state, kindOfTerm, refs.nodes);
      if (!resolved.ok) return resolved;
      const key = field === 'categories' ? 'categoryIds' : 'tagIds';
      record[key] = refs.append ? [...new Set([...record[key], ...resolved.value])] : resolved.value;
    }
  }
  record.modified = wpDate(nowMs);
  return undefined;
}

export function createContent(
  state: BlogState,
  kind: ContentKind,
  input: ContentInput,
  nowMs: number,
): Outcome<PostRecord | PageRecord> {
  if (!input.title || input.title.trim() === '') return fail('BAD_USER_INPUT', 'title must not be empty');
  const base = { databaseId: state.nextId, title: '', content: '', slug: '', date: wpDate(nowMs) };
  const firstAuthor = state.users[0]?.databaseId ?? 1;
  const record: PostRecord | PageRecord =
    kind === 'posts'
      ? {
          ...base,
          excerpt: '',
          modified: base.date,
          status: 'publish',
          authorId: firstAuthor,
          categoryIds: [],
          tagIds: [],
        }
      : { ...base, modified: base.date, status: 'publish', authorId: firstAuthor };
  const failure = applyContentFields(state, kind, record, input, nowMs);
  if (failure) return failure;
  if (kind === 'posts' && 'categoryIds' in record && record.categoryIds.length === 0) {
    // WordPress files a post without a category under the default category.
    const fallback = state.categories[0];
    if (fallback) record.categoryIds = [fallback.databaseId];
  }
  state.nextId += 1;
  (state[kind] as Array<PostRecord | PageRecord>).push(record);
  return ok(record);
}

export function updateContent(
  state: BlogState,
  kind: ContentKind,
  input: ContentInput,
  nowMs: number,
): Outcome<PostRecord | PageRecord> {
  if (!input.id) return fail('BAD_USER_INPUT', 'id is required');
  const found = findContent(state, kind, input.id);
  if (!found.ok) return found;
  if (input.title != null && input.title.trim() === '')
    return fail('BAD_USER_INPUT', 'title must not be empty');
  const failure = applyContentFields(state, kind, found.value, input, nowMs);
  return failure ?? found;
}

export function deleteContent(
  state: BlogState,
  kind: ContentKind,
  id: string,
): Outcome<PostRecord | PageRecord> {
  const found = findContent(state, kind, id);
  if (!found.ok) return found;
  const list = state[kind] as Array<PostRecord | PageRecord>;
  list.splice(list.indexOf(found.value), 1);
  return found;
}

export function createTerm(state: BlogState, kind: TermKind, input: TermInput): Outcome<TermRecord> {
  if (!input.name || input.name.trim() === '') return fail('BAD_USER_INPUT', 'name must not be empty');
  if (state[kind].some((term) => term.name === input.name)) {
    return fail('BAD_USER_INPUT', `A term with the name "${input.name}" already exists`);
  }
  const databaseId = state.nextId;
  const term: TermRecord = {
    databaseId,
    name: input.name,
    slug: uniqueSlug(slugify(input.slug ?? input.name), state[kind]),
    description: input.description ?? '',
  };
  state.nextId += 1;
  state[kind].push(term);
  return ok(term);
}

function findTerm(state: BlogState, kind: TermKind, id: string | null | undefined): Outcome<TermRecord> {
  if (!id) return fail('BAD_USER_INPUT', 'id is required');
  const databaseId = fromGlobalId(id, 'term');
  const term = state[kind].find((item) => item.databaseId === databaseId);
  return term
    ? ok(term)
    : fail('NOT_FOUND', `No ${kind === 'categories' ? 'category' : 'tag'} exists with the id ${id}`);
}

export function updateTerm(state: BlogState, kind: TermKind, input: TermInput): Outcome<TermRecord> {
  const found = findTerm(state, kind, input.id);
  if (!found.ok) return found;
  const term = found.value;
  if (input.name != null) {
    if (input.name.trim() === '') return fail('BAD_USER_INPUT', 'name must not be empty');
    term.name = input.name;
  }
  if (input.slug != null) term.slug = uniqueSlug(slugify(input.slug), state[kind], term.databaseId);
  if (input.description != null) term.description = input.description;
  return ok(term);
}

export function deleteTerm(state: BlogState, kind: TermKind, id: string): Outcome<TermRecord> {
  const found = findTerm(state, kind, id);
  if (!found.ok) return found;
  state[kind].splice(state[kind].indexOf(found.value), 1);
  const key = kind === 'categories' ? 'categoryIds' : 'tagIds';
  for (const post of state.posts) post[key] = post[key].filter((termId) => termId !== found.value.databaseId);
  return found;
}
