/**
 * A bound on the work of one request's execution, whatever the static limits let through (they are
 * estimates, and settings can raise them): every list a resolver returns is charged one plus its
 * items. Once `maxItems` is passed, every further list resolves empty at once (no filtering, no
 * sorting, no error objects: the rest of the execution has nothing left to descend into), and the
 * plugin answers the request with one error instead of its truncated result. So one request can
 * neither grow the process without bound nor hold its event loop (resolvers run synchronously) for
 * longer than `maxItems` items take.
 */
export class ListBudget {
  private used = 0;

  constructor(readonly maxItems: number) {}

  /** True once a list was cut short: the result must not be served. */
  get exhausted(): boolean {
    return this.used > this.maxItems;
  }

  /** Charges a list of `items`; false when the budget is spent (the list must resolve empty). */
  charge(items: number): boolean {
    if (this.exhausted) return false;
    this.used += 1 + items;
    return !this.exhausted;
  }
}

export function exhaustedMessage(maxItems: number): string {
  return `The query returned more than ${maxItems} list items; the limit is ${maxItems} (QUERY_MAX_LIST_ITEMS)`;
}

export function budgetExtensions(maxItems: number): Record<string, unknown> {
  return { code: 'QUERY_LIMIT_EXCEEDED', limit: 'listItems', measured: maxItems + 1, max: maxItems };
}
