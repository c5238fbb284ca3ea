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

export function applyPending(synced: LocalCollections, queued: readonly QueuedMutation[]): LocalCollections {
  const view: LocalCollections = {
    posts: [...synced.posts],
    pages: [...synced.pages],
    categories: [...synced.categories],
    tags: [...synced.tags],
    authors: [...synced.authors],
  };
  for (const item of queued) {
    const operation = operationOf(item.payload.query, item.payload.operationName);
    if (operation?.operation !== 'mutation') continue;
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
  return view;
}
