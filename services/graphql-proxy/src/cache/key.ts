import { createHash } from 'node:crypto';

/**
 * The cache key: sha256 of the normalised document, the operation name, the variables serialised
 * with sorted keys, and the caller's authorization scope, so that `{a,b}` and `{b,a}` share an entry
 * and one caller's private answer is never served to another.
 */

export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => stableStringify(item)).join(',')}]`;
  const entries = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${stableStringify((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

/** The scope of a request: `public` without credentials, else a hash of the Authorization header. */
export function authorizationScope(authorization: string | undefined): string {
  if (authorization === undefined || authorization === '') return 'public';
  return createHash('sha256').update(authorization).digest('hex').slice(0, 32);
}

/** What the key hashes: the four parts, one per line. */
function keyInput(
  normalisedDocument: string,
  operationName: string | null,
  variables: unknown,
  scope: string,
): string {
  const variablesText = variables === undefined || variables === null ? '{}' : stableStringify(variables);
  return `${normalisedDocument}\n${operationName ?? ''}\n${variablesText}\n${scope}`;
}

export function cacheKey(
  normalisedDocument: string,
  operationName: string | null,
  variables: unknown,
  scope: string,
): string {
  return createHash('sha256')
    .update(keyInput(normalisedDocument, operationName, variables, scope))
    .digest('hex');
}

/**
 * `cacheKey` with the keys of recent requests remembered: every query, hit or miss, needs its key,
 * and hashing it was a measurable share of a cache hit, while clients repeat the same few requests.
 * Bounded in entries (oldest dropped first); inputs longer than `maxInputLength` are hashed every time.
 */
export class CacheKeyMemo {
  private readonly memo = new Map<string, string>();

  constructor(
    private readonly maxEntries = 1000,
    private readonly maxInputLength = 4096,
  ) {}

  get size(): number {
    return this.memo.size;
  }

  keyOf(normalisedDocument: string, operationName: string | null, variables: unknown, scope: string): string {
    const input = keyInput(normalisedDocument, operationName, variables, scope);
    const known = this.memo.get(input);
    if (known !== undefined) return known;
    const key = createHash('sha256').update(input).digest('hex');
    if (input.length > this.maxInputLength) return key;
    if (this.memo.size >= this.maxEntries) {
      const oldest = this.memo.keys().next();
      if (!oldest.done) this.memo.delete(oldest.value);
    }
    this.memo.set(input, key);
    return key;
  }
}
