import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createContent,
  createTerm,
  deleteContent,
  deleteTerm,
  updateContent,
  updateTerm,
} from '../src/domain/content.js';
import type { BlogState } from '../src/domain/model.js';
import { toGlobalId } from '../src/domain/model.js';
import { seedState } from '../src/domain/seed.js';
import { applyChanges, diffState } from '../src/store/state-diff.js';

// Issue 41: the journal holds each mutation as the records it changed. Whatever the domain does to a
// copy of the state, replaying the diff (through JSON, as the journal stores it) on the state before
// gives the same state, collections in the same order.
type Step = (state: BlogState, now: number) => { ok: boolean };

const pick = <T>(list: readonly T[], n: number): T | undefined => list[n % Math.max(list.length, 1)];
const postId = (state: BlogState, n: number) => toGlobalId('post', pick(state.posts, n)?.databaseId ?? 1);
const termId = (state: BlogState, n: number) => toGlobalId('term', pick(state.tags, n)?.databaseId ?? 1);

const step: fc.Arbitrary<Step> = fc.oneof(
  fc
    .record({
      title: fc.string({ maxLength: 12 }),
      tag: fc.nat(),
      status: fc.constantFrom('DRAFT', 'PUBLISH', 'BOGUS'),
    })
    .map(
      ({ title, tag, status }): Step =>
        (state, now) =>
          createContent(
            state,
            'posts',
            { title, status, tags: { nodes: [{ slug: pick(state.tags, tag)?.slug ?? 'x' }] } },
            now,
          ),
    ),
  fc.record({ title: fc.string({ maxLength: 12 }) }).map(
    ({ title }): Step =>
      (state, now) =>
        createContent(state, 'pages', { title }, now),
  ),
  fc
    .record({
      n: fc.nat(),
      title: fc.option(fc.string({ maxLength: 12 })),
      append: fc.boolean(),
      tag: fc.nat(),
    })
    .map(
      ({ n, title, append, tag }): Step =>
        (state, now) =>
          updateContent(
            state,
            'posts',
            { id: postId(state, n), title, tags: { append, nodes: [{ id: termId(state, tag) }] } },
            now,
          ),
    ),
  fc.nat().map(
    (n): Step =>
      (state) =>
        deleteContent(state, 'posts', postId(state, n)),
  ),
  fc.string({ maxLength: 8 }).map(
    (name): Step =>
      (state) =>
        createTerm(state, 'tags', { name }),
  ),
  fc.record({ n: fc.nat(), slug: fc.string({ maxLength: 8 }) }).map(
    ({ n, slug }): Step =>
      (state) =>
        updateTerm(state, 'tags', { id: termId(state, n), slug }),
  ),
  fc.nat().map(
    (n): Step =>
      (state) =>
        deleteTerm(state, 'tags', termId(state, n)),
  ),
);

describe('the journal diff of a mutation', () => {
  it('replays to the same state, in the same order, for any sequence of mutations', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        let state = seedState();
        let replayed = structuredClone(state);
        let now = Date.UTC(2026, 0, 1);
        for (const change of steps) {
          now += 61_000;
          const draft = structuredClone(state);
          if (!change(draft, now).ok) continue;
          applyChanges(replayed, JSON.parse(JSON.stringify(diffState(state, draft))));
          expect(replayed).toEqual(draft);
          state = draft;
          replayed = structuredClone(replayed);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('says nothing for a change that changed nothing, one put for one changed record', () => {
    const state = seedState();
    expect(diffState(state, structuredClone(state))).toEqual([]);
    const draft = structuredClone(state);
    updateTerm(draft, 'tags', { id: toGlobalId('term', state.tags[0]?.databaseId ?? 0), description: 'new' });
    expect(diffState(state, draft)).toEqual([{ op: 'put', kind: 'tags', record: draft.tags[0] }]);
  });
});
