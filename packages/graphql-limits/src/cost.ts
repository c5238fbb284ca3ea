import type { FieldShape, SelectionShape, SizeArgument } from './shape.js';

/**
 * The estimated size of an operation's result: every field counts once per object it is resolved on,
 * and a list field multiplies what is below it by its page size (`first`/`last`, the default page size
 * when a connection is selected without them, capped at the largest page the upstream serves). So
 * `posts(first: 100) { nodes { title } }` costs 1 + 100 x 2, and nesting such lists multiplies.
 * Each selection shape is evaluated once (named fragments are shared shapes), so the work is linear in
 * the document's size. The result may be far beyond 2^53 (it is a float); only its comparison with a
 * limit matters.
 */

export interface PageSizes {
  /** Items of a list selected without `first`/`last` (WPGraphQL: 10). */
  readonly defaultPageSize: number;
  /** Largest page the upstream serves; a larger `first`/`last` counts as this (WPGraphQL: 100). */
  readonly maxPageSize: number;
}

function argumentValue(
  argument: SizeArgument,
  variables: Readonly<Record<string, unknown>>,
): number | undefined {
  if (argument === undefined) return undefined;
  if (typeof argument === 'number') return argument;
  const value = variables[argument.variable];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function pageSize(field: FieldShape, variables: Readonly<Record<string, unknown>>, sizes: PageSizes): number {
  if (field.list === undefined) return 1;
  const first = argumentValue(field.list.first, variables);
  const last = argumentValue(field.list.last, variables);
  const asked =
    first === undefined && last === undefined ? sizes.defaultPageSize : Math.max(first ?? 0, last ?? 0);
  return Math.max(0, Math.min(sizes.maxPageSize, asked));
}

export function estimateCost(
  root: SelectionShape,
  variables: Readonly<Record<string, unknown>> | null | undefined,
  sizes: PageSizes,
): number {
  const values = variables ?? {};
  const memo = new Map<SelectionShape, number>();
  const costOf = (shape: SelectionShape): number => {
    const known = memo.get(shape);
    if (known !== undefined) return known;
    let cost = 0;
    for (const field of shape.fields) {
      cost += 1 + (field.child ? pageSize(field, values, sizes) * costOf(field.child) : 0);
    }
    for (const fragment of shape.fragments) cost += costOf(fragment);
    memo.set(shape, cost);
    return cost;
  };
  return costOf(root);
}
