import { type DocumentNode, GraphQLError, getOperationAST, parse } from 'graphql';
import { estimateCost } from './cost.js';
import { jsonDepth } from './json-depth.js';
import { scanQueryText } from './lexical.js';
import { type CompiledOperation, type CompileFailure, compileOperation } from './shape.js';

/**
 * The limits a GraphQL request must stay within, checked before it is executed or forwarded, and what
 * a refusal says. Pure: the caller turns a `Refusal` into its own error answer.
 */

export interface QueryLimits {
  /** QUERY_MAX_DEPTH: deepest field nesting (a root field is depth 1). */
  readonly maxDepth: number;
  /** QUERY_MAX_BREADTH: most fields in one selection set, aliases counted, fragments merged in. */
  readonly maxBreadth: number;
  /** QUERY_MAX_COST: largest estimated result size (see cost.ts). */
  readonly maxCost: number;
  /** QUERY_MAX_TOKENS: largest query text, in GraphQL tokens. */
  readonly maxTokens: number;
  /** QUERY_MAX_DIRECTIVES: directives in one document. */
  readonly maxDirectives: number;
  /** REQUEST_MAX_JSON_DEPTH: nesting of `variables` and `extensions`. */
  readonly maxJsonDepth: number;
  /** Items of a list selected without `first`/`last` (WPGraphQL's default page). */
  readonly defaultPageSize: number;
  /** A larger `first`/`last` counts as this (WPGraphQL's largest page). */
  readonly maxPageSize: number;
}

export const DEFAULT_QUERY_LIMITS: QueryLimits = Object.freeze({
  maxDepth: 20,
  maxBreadth: 200,
  maxCost: 100_000,
  maxTokens: 10_000,
  maxDirectives: 50,
  maxJsonDepth: 64,
  defaultPageSize: 10,
  maxPageSize: 100,
});

/**
 * Brackets nesting beyond this is refused before parsing: the depth limit, doubled (a field's
 * arguments and input objects nest brackets too), plus room for an operation's variables. It also
 * keeps graphql-js's recursive parser far from the stack's end.
 */
export function maxNesting(limits: QueryLimits): number {
  return 2 * limits.maxDepth + 8;
}

export type LimitName = 'depth' | 'breadth' | 'cost' | 'tokens' | 'nesting' | 'directives' | 'jsonDepth';

export type Refusal =
  | {
      readonly code: 'QUERY_LIMIT_EXCEEDED';
      readonly limit: LimitName;
      readonly measured: number;
      readonly max: number;
      readonly message: string;
    }
  | { readonly code: 'GRAPHQL_PARSE_FAILED' | 'GRAPHQL_VALIDATION_FAILED'; readonly message: string };

const SETTING: Readonly<Record<LimitName, string>> = {
  depth: 'QUERY_MAX_DEPTH',
  breadth: 'QUERY_MAX_BREADTH',
  cost: 'QUERY_MAX_COST',
  tokens: 'QUERY_MAX_TOKENS',
  nesting: '2 x QUERY_MAX_DEPTH + 8',
  directives: 'QUERY_MAX_DIRECTIVES',
  jsonDepth: 'REQUEST_MAX_JSON_DEPTH',
};

const WHAT: Readonly<Record<LimitName, string>> = {
  depth: 'The query nests fields',
  breadth: 'One selection set of the query selects (aliases and fragments counted)',
  cost: 'The query may return (estimated from first/last and page sizes, multiplied down the nesting)',
  tokens: 'The query text holds',
  nesting: 'The query text nests brackets',
  directives: 'The query text holds',
  jsonDepth: 'The request nests JSON (variables or extensions)',
};

const UNIT: Readonly<Record<LimitName, string>> = {
  depth: 'levels deep',
  breadth: 'fields',
  cost: 'fields in all',
  tokens: 'tokens',
  nesting: 'levels deep',
  directives: 'directives',
  jsonDepth: 'levels deep',
};

export function exceeded(limit: LimitName, measured: number, max: number): Refusal {
  const amount =
    limit === 'tokens' || limit === 'nesting' || limit === 'jsonDepth' || limit === 'directives'
      ? `more than ${max}`
      : formatCount(measured);
  return {
    code: 'QUERY_LIMIT_EXCEEDED',
    limit,
    measured,
    max,
    message: `${WHAT[limit]} ${amount} ${UNIT[limit]}; the limit is ${max} (${SETTING[limit]})`,
  };
}

function formatCount(value: number): string {
  return Number.isSafeInteger(value) ? String(value) : value.toExponential(2);
}

/** The extensions of a refusal's GraphQL error: `code`, and for a limit `limit`, `measured`, `max`. */
export function refusalExtensions(refusal: Refusal): Record<string, unknown> {
  if (refusal.code !== 'QUERY_LIMIT_EXCEEDED') return { code: refusal.code };
  const measured = Number.isFinite(refusal.measured) ? refusal.measured : Number.MAX_VALUE;
  return { code: refusal.code, limit: refusal.limit, measured, max: refusal.max };
}

export type Inspection =
  | {
      readonly ok: true;
      readonly document: DocumentNode;
      /** Undefined when the document has no operation of that name (the caller says so its own way). */
      readonly operation: CompiledOperation | undefined;
    }
  | { readonly ok: false; readonly refusal: Refusal };

/** A fragment the limits cannot measure, in graphql-js's validation words. */
export function compileRefusal(failure: CompileFailure): Refusal {
  const message =
    failure.reason === 'fragmentCycle'
      ? `Cannot spread fragment "${failure.fragment}" within itself`
      : `Unknown fragment "${failure.fragment}"`;
  return { code: 'GRAPHQL_VALIDATION_FAILED', message };
}

/** Variable-independent checks of one operation already compiled. */
export function checkShape(operation: CompiledOperation, limits: QueryLimits): Refusal | undefined {
  if (operation.depth > limits.maxDepth) return exceeded('depth', operation.depth, limits.maxDepth);
  if (operation.breadth > limits.maxBreadth) return exceeded('breadth', operation.breadth, limits.maxBreadth);
  return undefined;
}

/** The text's tokens, bracket nesting and directives, before it is parsed. */
export function checkText(text: string, limits: QueryLimits): Refusal | undefined {
  const bounds = {
    maxTokens: limits.maxTokens,
    maxNesting: maxNesting(limits),
    maxDirectives: limits.maxDirectives,
  };
  const scan = scanQueryText(text, bounds);
  if (scan.ok || scan.limit === 'syntax') return undefined;
  const max =
    scan.limit === 'tokens'
      ? bounds.maxTokens
      : scan.limit === 'nesting'
        ? bounds.maxNesting
        : bounds.maxDirectives;
  return exceeded(scan.limit, scan.measured, max);
}

/** Lexes (bounded), parses and compiles the selected operation, and checks what does not depend on variables. */
export function inspectQuery(text: string, operationName: string | null, limits: QueryLimits): Inspection {
  const textRefusal = checkText(text, limits);
  if (textRefusal) return { ok: false, refusal: textRefusal };
  let document: DocumentNode;
  try {
    document = parse(text, { noLocation: true, maxTokens: limits.maxTokens });
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    return { ok: false, refusal: { code: 'GRAPHQL_PARSE_FAILED', message: error.message } };
  }
  const selected = getOperationAST(document, operationName ?? undefined);
  if (selected === null || selected === undefined) return { ok: true, document, operation: undefined };
  const compiled = compileOperation(document, selected);
  if (!compiled.ok) return { ok: false, refusal: compileRefusal(compiled) };
  const refusal = checkShape(compiled, limits);
  return refusal ? { ok: false, refusal } : { ok: true, document, operation: compiled };
}

/** The check that depends on the request's variables: the estimated result size. */
export function checkCost(
  operation: CompiledOperation,
  variables: Readonly<Record<string, unknown>> | null | undefined,
  limits: QueryLimits,
): Refusal | undefined {
  const cost = estimateCost(operation.root, { ...operation.variableDefaults, ...variables }, limits);
  return cost > limits.maxCost ? exceeded('cost', cost, limits.maxCost) : undefined;
}

/** `variables` and `extensions` nested deeper than REQUEST_MAX_JSON_DEPTH. */
export function checkJsonDepth(value: unknown, limits: QueryLimits): Refusal | undefined {
  const depth = jsonDepth(value, limits.maxJsonDepth);
  return depth > limits.maxJsonDepth ? exceeded('jsonDepth', depth, limits.maxJsonDepth) : undefined;
}
