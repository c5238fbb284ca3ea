/**
 * Relay-style slicing with WPGraphQL's cursor format (`arrayconnection:<databaseId>`), so that a
 * cursor stays valid when items are inserted before it.
 */

export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

export interface Connection<T> {
  nodes: T[];
  edges: Array<{ cursor: string; node: T }>;
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

/** WPGraphQL's default page size and the largest page it serves. */
export const DEFAULT_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 100;

export function encodeCursor(databaseId: number): string {
  return Buffer.from(`arrayconnection:${databaseId}`, 'utf8').toString('base64');
}

function decodeCursor(cursor: string): number | undefined {
  const match = /^arrayconnection:(\d+)$/.exec(Buffer.from(cursor, 'base64').toString('utf8'));
  return match ? Number(match[1]) : undefined;
}

export function connectionOf<T extends { databaseId: number }>(
  items: readonly T[],
  args: ConnectionArgs,
): Connection<T> {
  let start = 0;
  let end = items.length;
  if (args.after) {
    const id = decodeCursor(args.after);
    const index = items.findIndex((item) => item.databaseId === id);
    if (index >= 0) start = index + 1;
  }
  if (args.before) {
    const id = decodeCursor(args.before);
    const index = items.findIndex((item) => item.databaseId === id);
    if (index >= 0) end = index;
  }
  const clamp = (n: number): number => Math.max(0, Math.min(MAX_PAGE_SIZE, n));
  let slice = items.slice(start, end);
  let hasNextPage = end < items.length;
  let hasPreviousPage = start > 0;
  if (args.last != null) {
    const last = clamp(args.last);
    if (slice.length > last) hasPreviousPage = true;
    slice = slice.slice(Math.max(0, slice.length - last));
  } else {
    const first = clamp(args.first ?? DEFAULT_PAGE_SIZE);
    if (slice.length > first) hasNextPage = true;
    slice = slice.slice(0, first);
  }
  const edges = slice.map((node) => ({ cursor: encodeCursor(node.databaseId), node }));
  return {
    nodes: slice,
    edges,
    pageInfo: {
      hasNextPage,
      hasPreviousPage,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
  };
}
