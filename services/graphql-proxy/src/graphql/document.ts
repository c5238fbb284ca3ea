import {
  type DocumentNode,
  type FieldNode,
  GraphQLError,
  getOperationAST,
  Kind,
  type OperationTypeNode,
  parse,
  stripIgnoredCharacters,
  visit,
} from 'graphql';

/**
 * What the proxy needs to know about a GraphQL document: its operation type, a normalised text for
 * the cache key (whitespace, commas and comments removed, so they do not split the cache), and the
 * types it touches (for invalidation). Analyses are memoised, since clients send the same few
 * documents again and again and parsing is the most expensive step of a cache hit.
 */

export interface AnalysedOperation {
  readonly kind: OperationTypeNode;
  readonly normalised: string;
  readonly operationName: string | null;
  /** Names of the root fields of the selected operation (e.g. `posts`, `createPost`). */
  readonly rootFields: readonly string[];
  /** Type tags: for a query, the types its fields read; for a mutation, the types it writes (`*` = unknown). */
  readonly typeTags: readonly string[];
}

export type Analysis =
  | { readonly ok: true; readonly operation: AnalysedOperation }
  | {
      readonly ok: false;
      readonly code: 'GRAPHQL_PARSE_FAILED' | 'OPERATION_NOT_FOUND';
      readonly message: string;
    };

/** Field names whose type is not guessable from the name (WPGraphQL conventions). */
const FIELD_TYPES: Readonly<Record<string, string>> = {
  author: 'User',
  authors: 'User',
  viewer: 'User',
  users: 'User',
  user: 'User',
  categories: 'Category',
  category: 'Category',
};

/** Structural field names that say nothing about the data's type. */
const STRUCTURAL = new Set(['nodes', 'edges', 'node', 'pageInfo', 'cursor', '__typename']);

/** Guesses the type a field returns from its name: `posts` and `post` -> `Post`, `categories` -> `Category`. */
export function typeOfField(name: string): string | undefined {
  if (STRUCTURAL.has(name)) return undefined;
  const known = FIELD_TYPES[name];
  if (known) return known;
  let singular = name;
  if (/ies$/.test(name)) singular = `${name.slice(0, -3)}y`;
  else if (/[^s]s$/.test(name)) singular = name.slice(0, -1);
  return singular.charAt(0).toUpperCase() + singular.slice(1);
}

const MUTATION_VERB = /^(create|update|delete|upsert|add|remove|set|publish|restore|trash)([A-Z]\w*)$/;

/** The type a mutation field writes: `createPost` -> `Post`; undefined when the name does not say. */
export function typeOfMutationField(name: string): string | undefined {
  const match = MUTATION_VERB.exec(name);
  return match?.[2];
}

function analyseUncached(query: string, operationName: string | null): Analysis {
  let document: DocumentNode;
  try {
    document = parse(query, { noLocation: true });
  } catch (error) {
    const message = error instanceof GraphQLError ? error.message : 'The query could not be parsed';
    return { ok: false, code: 'GRAPHQL_PARSE_FAILED', message };
  }
  const operation = getOperationAST(document, operationName ?? undefined);
  if (operation === null || operation === undefined) {
    const message = operationName
      ? `Unknown operation named "${operationName}"`
      : 'The document must contain exactly one operation, or operationName must select one';
    return { ok: false, code: 'OPERATION_NOT_FOUND', message };
  }
  const rootFields = operation.selectionSet.selections.flatMap((selection) =>
    selection.kind === Kind.FIELD ? [selection.name.value] : [],
  );
  const tags = new Set<string>();
  if (operation.operation === 'mutation') {
    for (const field of rootFields) tags.add(typeOfMutationField(field) ?? '*');
  } else {
    // Fields with a selection set return objects: their names say which types the answer holds.
    const visitor = {
      Field(node: FieldNode) {
        if (node.selectionSet === undefined) return;
        const type = typeOfField(node.name.value);
        if (type) tags.add(type);
      },
    };
    visit(operation, visitor);
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) visit(definition, visitor);
    }
  }
  return {
    ok: true,
    operation: {
      kind: operation.operation,
      normalised: stripIgnoredCharacters(query),
      operationName: operationName ?? operation.name?.value ?? null,
      rootFields,
      typeTags: [...tags],
    },
  };
}

export interface AnalyserLimits {
  /** Distinct documents remembered. @default 1000 */
  readonly maxEntries?: number;
  /** Bytes of remembered documents (the text and its normalised form). @default 16 MiB */
  readonly maxBytes?: number;
}

/** What one memo entry keeps alive, roughly: its key text, its normalised text and a fixed overhead. */
function memoSize(memoKey: string, analysis: Analysis): number {
  return (
    memoKey.length + (analysis.ok ? analysis.operation.normalised.length : analysis.message.length) + 256
  );
}

export class DocumentAnalyser {
  private readonly memo = new Map<string, { analysis: Analysis; size: number }>();
  private bytes = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;

  /** Bounded in entries and in bytes (least recently used dropped first), so distinct large bodies cannot grow it. */
  constructor(limits: AnalyserLimits = {}) {
    this.maxEntries = limits.maxEntries ?? 1000;
    this.maxBytes = limits.maxBytes ?? 16 * 1024 * 1024;
  }

  get stats(): { entries: number; bytes: number } {
    return { entries: this.memo.size, bytes: this.bytes };
  }

  analyse(query: string, operationName: string | null): Analysis {
    const memoKey = operationName === null ? query : `${operationName}\u0000${query}`;
    const known = this.memo.get(memoKey);
    if (known !== undefined) {
      this.memo.delete(memoKey);
      this.memo.set(memoKey, known);
      return known.analysis;
    }
    const analysis = analyseUncached(query, operationName);
    const size = memoSize(memoKey, analysis);
    // A document bigger than a sixteenth of the budget is analysed every time rather than evicting
    // the many small documents that make the hot path fast.
    if (size > this.maxBytes / 16) return analysis;
    this.memo.set(memoKey, { analysis, size });
    this.bytes += size;
    for (const [key, entry] of this.memo) {
      if (this.memo.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      this.memo.delete(key);
      this.bytes -= entry.size;
    }
    return analysis;
  }
}
