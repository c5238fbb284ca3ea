/** Records as stored in the blog's data file. Ids are integers (`databaseId`), unique per kind. */

export type PostStatus = 'publish' | 'draft' | 'pending' | 'private';

export interface UserRecord {
  databaseId: number;
  name: string;
  slug: string;
  description: string;
}

export interface TermRecord {
  databaseId: number;
  name: string;
  slug: string;
  description: string;
}

export interface PostRecord {
  databaseId: number;
  title: string;
  content: string;
  excerpt: string;
  slug: string;
  /** `YYYY-MM-DDTHH:mm:ss` in UTC, the WPGraphQL date format. */
  date: string;
  modified: string;
  status: PostStatus;
  authorId: number;
  categoryIds: number[];
  tagIds: number[];
}

export interface PageRecord {
  databaseId: number;
  title: string;
  content: string;
  slug: string;
  date: string;
  modified: string;
  status: PostStatus;
  authorId: number;
}

export interface BlogState {
  nextId: number;
  users: UserRecord[];
  posts: PostRecord[];
  pages: PageRecord[];
  categories: TermRecord[];
  tags: TermRecord[];
}

export type TermKind = 'categories' | 'tags';
export type ContentKind = 'posts' | 'pages';

/** WPGraphQL global ids: base64 of `<type>:<databaseId>` (posts and pages share `post`, terms `term`). */
export type GlobalIdType = 'post' | 'term' | 'user';

export function toGlobalId(type: GlobalIdType, databaseId: number): string {
  return Buffer.from(`${type}:${databaseId}`, 'utf8').toString('base64');
}

/** Accepts a global id or a plain database id; returns undefined when it is neither. */
export function fromGlobalId(id: string, expected: GlobalIdType): number | undefined {
  if (/^\d+$/.test(id)) return Number(id);
  const decoded = Buffer.from(id, 'base64').toString('utf8');
  const match = /^(post|term|user):(\d+)$/.exec(decoded);
  if (match === null || match[1] !== expected) return undefined;
  return Number(match[2]);
}

/** Formats a clock reading the way WPGraphQL prints dates (no milliseconds, no zone; UTC). */
export function wpDate(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 19);
}

export function slugify(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slug.length > 0 ? slug.slice(0, 190) : 'untitled';
}

/** WordPress makes slugs unique by appending `-2`, `-3`, ... */
export function uniqueSlug(
  wanted: string,
  taken: ReadonlyArray<{ slug: string; databaseId: number }>,
  self?: number,
): string {
  const used = new Set(taken.filter((item) => item.databaseId !== self).map((item) => item.slug));
  if (!used.has(wanted)) return wanted;
  for (let n = 2; ; n += 1) {
    const candidate = `${wanted}-${n}`;
    if (!used.has(candidate)) return candidate;
  }
}
