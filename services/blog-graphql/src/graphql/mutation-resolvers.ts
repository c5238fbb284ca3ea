import {
  type ContentInput,
  createContent,
  createTerm,
  deleteContent,
  deleteTerm,
  type TermInput,
  updateContent,
  updateTerm,
} from '../domain/content.js';
import { type ContentKind, type TermKind, toGlobalId } from '../domain/model.js';
import { type BlogContext, mutateOrThrow } from './context.js';

/** WPGraphQL-style mutations: one `input` argument, a payload echoing `clientMutationId`. */

interface InputArgs<T> {
  input: T & { clientMutationId?: string | null };
}

function contentMutations(kind: ContentKind, typeName: 'Post' | 'Page', field: 'post' | 'page') {
  return {
    [`create${typeName}`]: async (
      _root: unknown,
      { input }: InputArgs<ContentInput>,
      context: BlogContext,
    ) => {
      const record = await mutateOrThrow(context, (draft) =>
        createContent(draft, kind, input, context.now()),
      );
      return { clientMutationId: input.clientMutationId ?? null, [field]: record };
    },
    [`update${typeName}`]: async (
      _root: unknown,
      { input }: InputArgs<ContentInput>,
      context: BlogContext,
    ) => {
      const record = await mutateOrThrow(context, (draft) =>
        updateContent(draft, kind, input, context.now()),
      );
      return { clientMutationId: input.clientMutationId ?? null, [field]: record };
    },
    [`delete${typeName}`]: async (
      _root: unknown,
      { input }: InputArgs<{ id: string }>,
      context: BlogContext,
    ) => {
      const record = await mutateOrThrow(context, (draft) => deleteContent(draft, kind, input.id));
      return {
        clientMutationId: input.clientMutationId ?? null,
        deletedId: toGlobalId('post', record.databaseId),
        [field]: record,
      };
    },
  };
}

function termMutations(kind: TermKind, typeName: 'Category' | 'Tag', field: 'category' | 'tag') {
  return {
    [`create${typeName}`]: async (_root: unknown, { input }: InputArgs<TermInput>, context: BlogContext) => {
      const term = await mutateOrThrow(context, (draft) => createTerm(draft, kind, input));
      return { clientMutationId: input.clientMutationId ?? null, [field]: term };
    },
    [`update${typeName}`]: async (_root: unknown, { input }: InputArgs<TermInput>, context: BlogContext) => {
      const term = await mutateOrThrow(context, (draft) => updateTerm(draft, kind, input));
      return { clientMutationId: input.clientMutationId ?? null, [field]: term };
    },
    [`delete${typeName}`]: async (
      _root: unknown,
      { input }: InputArgs<{ id: string }>,
      context: BlogContext,
    ) => {
      const term = await mutateOrThrow(context, (draft) => deleteTerm(draft, kind, input.id));
      return {
        clientMutationId: input.clientMutationId ?? null,
        deletedId: toGlobalId('term', term.databaseId),
        [field]: term,
      };
    },
  };
}

export const mutationResolvers = {
  RootMutation: {
    ...contentMutations('posts', 'Post', 'post'),
    ...contentMutations('pages', 'Page', 'page'),
    ...termMutations('categories', 'Category', 'category'),
    ...termMutations('tags', 'Tag', 'tag'),
  },
};
