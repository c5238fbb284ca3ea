import type { BlogState, PageRecord, PostRecord, TermRecord, UserRecord } from '../domain/model.js';

/**
 * A committed mutation as the records it changed, for the journal (journal.ts): the blog's state is
 * no longer rewritten whole per mutation (issue 41), one line of these changes is appended instead.
 * The domain changes a copy of the state (push, splice, fields set in place); `diffState` compares
 * it with the state before, record by record, and `applyChanges` makes the same change to a state
 * read back from the snapshot: a record put again replaces it where it was, a new one is appended,
 * so the collections keep their order.
 */

export type CollectionKind = 'users' | 'posts' | 'pages' | 'categories' | 'tags';

const COLLECTIONS: readonly CollectionKind[] = ['users', 'posts', 'pages', 'categories', 'tags'];

type AnyRecord = UserRecord | PostRecord | PageRecord | TermRecord;

export type ContentChange =
  | { readonly op: 'put'; readonly kind: CollectionKind; readonly record: AnyRecord }
  | { readonly op: 'remove'; readonly kind: CollectionKind; readonly id: number }
  | { readonly op: 'nextId'; readonly value: number };

/** Records are flat: strings and numbers, and arrays of ids. */
function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((item, n) => item === b[n]);
  return a === b;
}

function sameRecord(a: AnyRecord, b: AnyRecord): boolean {
  const left = a as unknown as Record<string, unknown>;
  const right = b as unknown as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every((key) => key in right && sameValue(left[key], right[key]));
}

export function diffState(before: Readonly<BlogState>, after: Readonly<BlogState>): ContentChange[] {
  const changes: ContentChange[] = [];
  for (const kind of COLLECTIONS) {
    const old = before[kind] as readonly AnyRecord[];
    const now = after[kind] as readonly AnyRecord[];
    if (old === now) continue;
    const byId = new Map(old.map((record) => [record.databaseId, record]));
    const kept = new Set<number>();
    for (const record of now) {
      kept.add(record.databaseId);
      const previous = byId.get(record.databaseId);
      if (previous === undefined || !sameRecord(previous, record)) changes.push({ op: 'put', kind, record });
    }
    for (const record of old) {
      if (!kept.has(record.databaseId)) changes.push({ op: 'remove', kind, id: record.databaseId });
    }
  }
  if (before.nextId !== after.nextId) changes.push({ op: 'nextId', value: after.nextId });
  return changes;
}

/** Makes `changes` to `state` in place (a state read from the snapshot, replaying the journal). */
export function applyChanges(state: BlogState, changes: readonly ContentChange[]): void {
  for (const change of changes) {
    if (change.op === 'nextId') {
      state.nextId = change.value;
      continue;
    }
    const list = state[change.kind] as AnyRecord[];
    const id = change.op === 'put' ? change.record.databaseId : change.id;
    const at = list.findIndex((record) => record.databaseId === id);
    if (change.op === 'remove') {
      if (at >= 0) list.splice(at, 1);
    } else if (at >= 0) list[at] = change.record;
    else list.push(change.record);
  }
}

/** Whether `value` reads as a content change (a journal line is checked before it is applied). */
export function isContentChange(value: unknown): value is ContentChange {
  if (value === null || typeof value !== 'object') return false;
  const change = value as Record<string, unknown>;
  if (change['op'] === 'nextId') return typeof change['value'] === 'number';
  if (!COLLECTIONS.includes(change['kind'] as CollectionKind)) return false;
  if (change['op'] === 'remove') return typeof change['id'] === 'number';
  const record = change['record'] as { databaseId?: unknown } | null;
  return change['op'] === 'put' && typeof record === 'object' && typeof record?.databaseId === 'number';
}
