import {
  checkCost,
  checkJsonDepth,
  checkShape,
  checkText,
  compileRefusal,
  type QueryLimits,
  type Refusal,
  refusalExtensions,
} from '@platform/graphql-limits/limits';
import { type CompiledOperation, compileOperations } from '@platform/graphql-limits/shape';
import {
  type DocumentNode,
  type GraphQLError,
  getOperationAST,
  Kind,
  type OperationDefinitionNode,
} from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { budgetExtensions, exhaustedMessage, ListBudget } from './list-budget.js';

/**
 * The blog's limits (issue 28: twelve nested levels of `posts { nodes { author { node { posts ...`
 * made the process unresponsive; thirty grew it to 4 GB), as a yoga plugin, in the order a request
 * meets them:
 *
 * 1. params: `variables` and `extensions` nested deeper than REQUEST_MAX_JSON_DEPTH;
 * 2. parse: the text's tokens, bracket nesting and directives (before graphql-js's recursive parser),
 *    then every operation's depth and breadth (before validation, whose overlapping-fields rule is
 *    quadratic in a selection set's width);
 * 3. execute: the estimated cost with the request's variables, then a ListBudget in the context that
 *    resolvers charge, and one error instead of the result when it ran out.
 *
 * Refusals are GraphQL errors with `extensions.code` QUERY_LIMIT_EXCEEDED, answered as yoga answers
 * validation errors (HTTP 200 for `application/json`).
 */

export interface ExecutionLimits {
  readonly limits: QueryLimits;
  /** QUERY_MAX_LIST_ITEMS: list items one request may resolve. */
  readonly maxListItems: number;
}

export interface BudgetContext {
  listBudget?: ListBudget;
}

function toError(refusal: Refusal): GraphQLError {
  return createGraphQLError(refusal.message, { extensions: refusalExtensions(refusal) });
}

export function useQueryLimits(options: ExecutionLimits): Plugin<BudgetContext> {
  const { limits, maxListItems } = options;
  // Documents are cached by yoga, so their compiled operations are kept as long as they are.
  const compiled = new WeakMap<DocumentNode, ReadonlyMap<OperationDefinitionNode, CompiledOperation>>();

  const compile = (document: DocumentNode) => {
    const known = compiled.get(document);
    if (known) return known;
    const operations = document.definitions.filter(
      (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
    );
    const result = compileOperations(document, operations);
    if (!result.ok) throw toError(compileRefusal(result));
    for (const operation of result.operations.values()) {
      const refusal = checkShape(operation, limits);
      if (refusal) throw toError(refusal);
    }
    compiled.set(document, result.operations);
    return result.operations;
  };

  return {
    onParams({ params, setResult }) {
      const refusal = checkJsonDepth(params.variables, limits) ?? checkJsonDepth(params.extensions, limits);
      if (refusal) setResult({ errors: [toError(refusal)] });
    },
    onParse({ setParseFn, parseFn }) {
      setParseFn((source, parseOptions) => {
        const text = typeof source === 'string' ? source : source.body;
        const refusal = checkText(text, limits);
        if (refusal) throw toError(refusal);
        const document = parseFn(source, { ...parseOptions, maxTokens: limits.maxTokens });
        compile(document);
        return document;
      });
    },
    onExecute({ args, setResultAndStopExecution, extendContext }) {
      const selected = getOperationAST(args.document, args.operationName ?? undefined);
      const operation = selected ? compile(args.document).get(selected) : undefined;
      const refusal = operation
        ? checkCost(operation, args.variableValues as Record<string, unknown> | undefined, limits)
        : undefined;
      if (refusal) {
        setResultAndStopExecution({ errors: [toError(refusal)] });
        return;
      }
      const budget = new ListBudget(maxListItems);
      extendContext({ listBudget: budget });
      return {
        onExecuteDone({ setResult }) {
          if (budget.exhausted) {
            const error = createGraphQLError(exhaustedMessage(maxListItems), {
              extensions: budgetExtensions(maxListItems),
            });
            setResult({ data: null, errors: [error] });
          }
        },
      };
    },
  };
}
