import { describe, expect, it } from 'vitest';
import { applyPending, emptyCollections } from '../src/local/optimistic.js';
import type { QueuedMutation } from '../src/queue/store.js';

function queued(id: string, query: string, variables: Record<string, unknown> | null = null): QueuedMutation {
  return {
    id,
    seq: 1,
    createdAt: '2024-01-01T00:00:00.000Z',
    payload: { query, variables, operationName: null },
    idempotencyKey: id,
    status: 'pending',
    attempts: 0,
    nextAttemptAt: 0,
  };
}

describe('applyPending', () => {
  const synced = {
    ...emptyCollections(),
    posts: [{ id: 'cG9zdDox', databaseId: 1, title: 'One' }],
    tags: [{ id: 'dGVybTo2', databaseId: 6, name: 'graphql' }],
  };

  it('adds, updates and marks deletions as pending without touching the synced copy', () => {
    const view = applyPending(synced, [
      queued('q1', 'mutation ($i: CreatePostInput!) { createPost(input: $i) { post { id } } }', {
        i: { title: 'New', clientMutationId: 'c' },
      }),
      queued('q2', 'mutation { updatePost(input: { id: "1", title: "Renamed" }) { post { id } } }'),
      queued('q3', 'mutation { deleteTag(input: { id: "dGVybTo2" }) { deletedId } }'),
      queued('q4', 'mutation { somethingElse { ok } }'),
      queued('q5', 'not graphql'),
    ]);
    expect(view.posts).toEqual([
      {
        id: 'cG9zdDox',
        databaseId: 1,
        title: 'Renamed',
        pending: true,
        queueId: 'q2',
        pendingAction: 'update',
      },
      { id: 'pending:q1', title: 'New', pending: true, queueId: 'q1', pendingAction: 'create' },
    ]);
    expect(view.tags[0]).toMatchObject({ name: 'graphql', pending: true, pendingAction: 'delete' });
    expect(synced.posts[0]).toEqual({ id: 'cG9zdDox', databaseId: 1, title: 'One' });
  });
});
