import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';

/**
 * An operation reduced to what its limits need, without a schema (the proxy has none): the nesting of
 * its fields, how wide each selection set is once its fragments are merged in, and, per field, how many
 * items it may return. A named fragment is compiled once and shared by every spread of it, so the work
 * is linear in the document's size however often a fragment is spread (a fragment spreading another
 * twice, ten times over, would be 2^10 expansions if walked spread by spread). A spread cycle, or a
 * spread of an unknown fragment, is refused instead of compiled.
 */

/** A list-size argument as written: an integer literal, a variable's name, or absent. */
export type SizeArgument = number | { readonly variable: string } | undefined;

export interface FieldShape {
  /** `undefined`: the field returns one value. Otherwise it returns a page of a list. */
  readonly list: { readonly first: SizeArgument; readonly last: SizeArgument } | undefined;
  readonly child: SelectionShape | undefined;
}

export interface SelectionShape {
  readonly fields: readonly FieldShape[];
  /** Inline fragments and named fragments (shared objects) merged into this selection set. */
  readonly fragments: readonly SelectionShape[];
}

export interface CompiledOperation {
  readonly root: SelectionShape;
  /** Deepest field nesting; a root field is at depth 1. */
  readonly depth: number;
  /** Most fields (aliases count, fragments merged in) of any one selection set. */
  readonly breadth: number;
  /** Field selections compiled (a named fragment's once), a measure of the shape's memory. */
  readonly fields: number;
  /** Integer default values of the operation's variables (`$first: Int = 100`). */
  readonly variableDefaults: Readonly<Record<string, number>>;
}

export type CompileFailure = {
  readonly ok: false;
  readonly reason: 'fragmentCycle' | 'unknownFragment';
  readonly fragment: string;
};

interface Compiled {
  readonly shape: SelectionShape;
  readonly depth: number;
  /** Fields of this selection set itself, its fragments merged in. */
  readonly width: number;
  /** The widest selection set within (this one included). */
  readonly breadth: number;
  /** Selects `nodes` or `edges`, directly or through its fragments: a page of a list. */
  readonly connection: boolean;
}

class Failure extends Error {
  constructor(readonly failure: CompileFailure) {
    super(failure.reason);
  }
}

/** Field names that make a selection a connection (a page of a list) without `first`/`last`. */
const CONNECTION_FIELDS = new Set(['nodes', 'edges']);

function sizeArgument(value: ValueNode | undefined): SizeArgument {
  if (value === undefined) return undefined;
  if (value.kind === Kind.INT) return Number(value.value);
  if (value.kind === Kind.VARIABLE) return { variable: value.name.value };
  return undefined;
}

function listOf(field: FieldNode, child: Compiled | undefined): FieldShape['list'] {
  let first: SizeArgument;
  let last: SizeArgument;
  let paged = false;
  for (const argument of field.arguments ?? []) {
    if (argument.name.value === 'first') {
      first = sizeArgument(argument.value);
      paged = true;
    } else if (argument.name.value === 'last') {
      last = sizeArgument(argument.value);
      paged = true;
    }
  }
  return paged || child?.connection ? { first, last } : undefined;
}

class Compiler {
  private readonly definitions = new Map<string, FragmentDefinitionNode>();
  private readonly done = new Map<string, Compiled>();
  private readonly inProgress = new Set<string>();
  fields = 0;

  constructor(document: DocumentNode) {
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) {
        this.definitions.set(definition.name.value, definition);
      }
    }
  }

  fragment(name: string): Compiled {
    const known = this.done.get(name);
    if (known !== undefined) return known;
    if (this.inProgress.has(name)) throw new Failure({ ok: false, reason: 'fragmentCycle', fragment: name });
    const definition = this.definitions.get(name);
    if (definition === undefined) {
      throw new Failure({ ok: false, reason: 'unknownFragment', fragment: name });
    }
    this.inProgress.add(name);
    const compiled = this.selectionSet(definition.selectionSet);
    this.inProgress.delete(name);
    this.done.set(name, compiled);
    return compiled;
  }

  selectionSet(node: SelectionSetNode): Compiled {
    const fields: FieldShape[] = [];
    const fragments: SelectionShape[] = [];
    let depth = 0;
    let width = 0;
    let breadth = 0;
    let connection = false;
    for (const selection of node.selections) {
      if (selection.kind === Kind.FIELD) {
        const child = selection.selectionSet ? this.selectionSet(selection.selectionSet) : undefined;
        fields.push({ list: listOf(selection, child), child: child?.shape });
        if (CONNECTION_FIELDS.has(selection.name.value)) connection = true;
        this.fields += 1;
        width += 1;
        depth = Math.max(depth, 1 + (child?.depth ?? 0));
        breadth = Math.max(breadth, child?.breadth ?? 0);
      } else {
        const merged =
          selection.kind === Kind.INLINE_FRAGMENT
            ? this.selectionSet(selection.selectionSet)
            : this.fragment(selection.name.value);
        fragments.push(merged.shape);
        width += merged.width;
        depth = Math.max(depth, merged.depth);
        breadth = Math.max(breadth, merged.breadth);
        // `posts { ...Page }` is as much a page of posts as `posts { nodes { ... } }`.
        if (merged.connection) connection = true;
      }
    }
    return { shape: { fields, fragments }, depth, width, breadth: Math.max(breadth, width), connection };
  }
}

function integerDefaults(operation: OperationDefinitionNode): Record<string, number> {
  const defaults: Record<string, number> = {};
  for (const definition of operation.variableDefinitions ?? []) {
    if (definition.defaultValue?.kind === Kind.INT) {
      defaults[definition.variable.name.value] = Number(definition.defaultValue.value);
    }
  }
  return defaults;
}

export function compileOperation(
  document: DocumentNode,
  operation: OperationDefinitionNode,
): ({ readonly ok: true } & CompiledOperation) | CompileFailure {
  const all = compileOperations(document, [operation]);
  return all.ok ? { ok: true, ...(all.operations.get(operation) as CompiledOperation) } : all;
}

/**
 * Compiles several operations of one document with one fragment memo, so a document of many
 * operations spreading one large fragment compiles that fragment once, not once per operation.
 */
export function compileOperations(
  document: DocumentNode,
  operations: readonly OperationDefinitionNode[],
):
  | { readonly ok: true; readonly operations: ReadonlyMap<OperationDefinitionNode, CompiledOperation> }
  | CompileFailure {
  try {
    const compiler = new Compiler(document);
    const compiled = new Map<OperationDefinitionNode, CompiledOperation>();
    for (const operation of operations) {
      const before = compiler.fields;
      const root = compiler.selectionSet(operation.selectionSet);
      compiled.set(operation, {
        root: root.shape,
        depth: root.depth,
        breadth: root.breadth,
        fields: compiler.fields - before,
        variableDefaults: integerDefaults(operation),
      });
    }
    return { ok: true, operations: compiled };
  } catch (error) {
    if (error instanceof Failure) return error.failure;
    throw error;
  }
}
