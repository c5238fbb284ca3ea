import type { Scope } from '../apikeys/store.js';

/** What never changes about an API key once issued: enough to verify a signature and a scope. */
export interface KnownKey {
  readonly id: number;
  readonly accountId: number;
  readonly publicKey: string;
  /** The decrypted secret. */
  readonly secret: string;
  readonly scopes: readonly Scope[];
}

/**
 * Recently used API keys with their decrypted secrets, least recently used evicted first, so that a
 * signed request costs neither a key lookup nor a decryption. Only immutable facts are kept: whether
 * the key is still enabled is checked by the statement that records the request's nonce (every
 * authenticated request records one), so disabling or revoking a key, from this process or the
 * operator CLI, takes effect on the next request.
 */
export class ApiKeyCache {
  private readonly keys = new Map<string, KnownKey>();

  constructor(private readonly capacity = 10_000) {}

  get(publicKey: string): KnownKey | undefined {
    const key = this.keys.get(publicKey);
    if (key) {
      // Map iteration order is insertion order: re-inserting marks the key most recently used.
      this.keys.delete(publicKey);
      this.keys.set(publicKey, key);
    }
    return key;
  }

  remember(key: KnownKey): void {
    this.keys.delete(key.publicKey);
    this.keys.set(key.publicKey, key);
    if (this.keys.size > this.capacity) {
      const oldest = this.keys.keys().next().value;
      if (oldest !== undefined) this.keys.delete(oldest);
    }
  }

  get size(): number {
    return this.keys.size;
  }
}
