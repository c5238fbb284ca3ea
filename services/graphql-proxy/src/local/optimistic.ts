import { Kind, type OperationDefinitionNode, parse, valueFromASTUntyped } from 'graphql';
import type { QueuedMutation } from '../queue/store.js';

/**
 * Applies queued mutations to a copy of the synchronised collections, so that the local data shows
 * what the blog will look like once the queue is replayed. Every touched record is marked
 * `pending: true` with its `queueId` until the replay confirms it and a sync replaces it.
 */

export type LocalRecord = Record<string, unknown>;

export interface LocalCollections {
  posts: LocalRecord[];
  pages: LocalRecord[];
  categories: LocalRecord[];
  tags: LocalRecord[];
  authors: LocalRecord[];
}

export const COLLECTIONS = ['posts', 'pages', 'categories', 'tags', 'authors'] as const;

export function emptyCollections(): LocalCollections {
  return { posts: [], pages: [], categories: [], tags: [], authors: [] };
}

const TARGETS: Readonly<Record<string, keyof LocalCollections>> = {
  Post: 'posts',
  Page: 'pages',
  Category: 'categories',
  Tag: 'tags',
};

const FIELD = /^(create|update|delete)(Post|Page|Category|Tag)$/;

function sameRecord(record: LocalRecord, id: unknown): boolean {
  return record['id'] === id || (typeof id === 'string' && String(record['databaseId']) === id);
}

function operationOf(query: string, operationName: string | null): OperationDefinitionNode | undefined {
  try {
    const document = parse(query, { noLocation: true });
    const operations = document.definitions.filter(
      (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
    );
    return operationName ? operations.find((op) => op.name?.value === operationName) : operations[0];
  } catch {
    return undefined;
  }
}

/** Parsed operations of queued mutations, parsed once per item (recomputations do not re-parse). */
const parsedOps = new WeakMap<QueuedMutation, OperationDefinitionNode | null>();

function operationOfItem(item: QueuedMutation): OperationDefinitionNode | undefined {
  let operation = parsedOps.get(item);
  if (operation === undefined) {
    operation = operationOf(item.payload.query, item.payload.operationName) ?? null;
    parsedOps.set(item, operation);
  }
  return operation ?? undefined;
}

/** A copy of the collections (the arrays, not the records) that mutations can be applied to. */
export function copyCollections(synced: LocalCollections): LocalCollections {
  return {
    posts: [...synced.posts],
    pages: [...synced.pages],
    categories: [...synced.categories],
    tags: [...synced.tags],
    authors: [...synced.authors],
  };
}

export function applyPending(synced: LocalCollections, queued: readonly QueuedMutation[]): LocalCollections {
  const view = copyCollections(synced);
  for (const item of queued) applyOne(view, item);
  return view;
}

/** Applies one queued mutation to `view` in place. */
export function applyOne(view: LocalCollections, item: QueuedMutation): void {
  const operation = operationOfItem(item);
  if (operation?.operation !== 'mutation') return;
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) continue;
    const match = FIELD.exec(selection.name.value);
    const target = match && TARGETS[match[2] as string];
    if (!match || !target) continue;
    const argument = selection.arguments?.find((arg) => arg.name.value === 'input');
    const input = argument
      ? (valueFromASTUntyped(argument.value, item.payload.variables ?? {}) as LocalRecord | null)
      : null;
    if (input === null || typeof input !== 'object') continue;
    const { clientMutationId: _ignored, ...fields } = input;
    const list = view[target];
    const marks = { pending: true, queueId: item.id, pendingAction: match[1] };
    if (match[1] === 'create') {
      list.push({ id: `pending:${item.id}`, ...fields, ...marks });
      continue;
    }
    const index = list.findIndex((record) => sameRecord(record, fields['id']));
    if (index < 0) continue;
    const current = list[index] as LocalRecord;
    list[index] =
      match[1] === 'update'
        ? { ...current, ...fields, id: current['id'], ...marks }
        : { ...current, ...marks };
  }
}
