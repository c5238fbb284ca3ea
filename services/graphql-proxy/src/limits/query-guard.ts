import {
  checkCost,
  checkJsonDepth,
  inspectQuery,
  type QueryLimits,
  type Refusal,
} from '@platform/graphql-limits/limits';
import type { CompiledOperation } from '@platform/graphql-limits/shape';

/**
 * The proxy's limits on a GraphQL request (issue 28: one anonymous query nested twelve levels deep
 * took the blog, and with it the proxy's breaker, down). Checked in GraphQLHandler.handle before the
 * document is analysed, the cache is asked, a persisted query is remembered, a mutation is queued or
 * anything is sent upstream: a refused request touches no store and never reaches the upstream, so it
 * cannot open the breaker either.
 *
 * The variable-independent part (lexing, parsing, depth, breadth, directives) is remembered per
 * document, like the analyser's parse, so a repeated query costs one map lookup and the cost estimate
 * (linear in the document, evaluated with the request's variables).
 */

type Verdict = { readonly operation: CompiledOperation | undefined } | { readonly refusal: Refusal };

export interface QueryGuardOptions {
  readonly limits: QueryLimits;
  /** Documents remembered. @default 1000 */
  readonly maxEntries?: number;
  /** Bytes of remembered documents (text and shape). @default 8 MiB */
  readonly maxBytes?: number;
}

export class QueryGuard {
  private readonly memo = new Map<string, { verdict: Verdict; size: number }>();
  private bytes = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;

  constructor(private readonly options: QueryGuardOptions) {
    this.maxEntries = options.maxEntries ?? 1000;
    this.maxBytes = options.maxBytes ?? 8 * 1024 * 1024;
  }

  get limits(): QueryLimits {
    return this.options.limits;
  }

  /** `variables` and `extensions` nested too deep: checked before anything walks them recursively. */
  checkBody(body: unknown): Refusal | undefined {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
    const { variables, extensions } = body as Record<string, unknown>;
    return checkJsonDepth(variables, this.limits) ?? checkJsonDepth(extensions, this.limits);
  }

  /** The query's limits; undefined when it may go on. Parse failures are left to the analyser. */
  check(
    query: string,
    operationName: string | null,
    variables: Readonly<Record<string, unknown>> | null,
  ): Refusal | undefined {
    const verdict = this.verdictOf(query, operationName);
    if ('refusal' in verdict) return verdict.refusal;
    return verdict.operation ? checkCost(verdict.operation, variables, this.limits) : undefined;
  }

  private verdictOf(query: string, operationName: string | null): Verdict {
    const key = operationName === null ? query : `${operationName}\u0000${query}`;
    const known = this.memo.get(key);
    if (known !== undefined) {
      this.memo.delete(key);
      this.memo.set(key, known);
      return known.verdict;
    }
    const inspection = inspectQuery(query, operationName, this.limits);
    const verdict: Verdict = inspection.ok
      ? { operation: inspection.operation }
      : // A syntax error is the analyser's to report, with its own code and wording.
        inspection.refusal.code === 'GRAPHQL_PARSE_FAILED'
        ? { operation: undefined }
        : { refusal: inspection.refusal };
    // Text and shape (about 100 bytes a field); a document over a sixteenth of the budget is
    // inspected every time.
    const fields = 'operation' in verdict && verdict.operation ? verdict.operation.fields : 0;
    const size = key.length + 100 * fields + 256;
    if (size > this.maxBytes / 16) return verdict;
    this.memo.set(key, { verdict, size });
    this.bytes += size;
    for (const [oldest, entry] of this.memo) {
      if (this.memo.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      this.memo.delete(oldest);
      this.bytes -= entry.size;
    }
    return verdict;
  }
}
