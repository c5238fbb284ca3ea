import type { Sql } from '../db/database.js';

/** What the watch tells a connection whose key was disabled or revoked. */
export interface KeyHolder {
  keyWithdrawn(): void;
}

/**
 * The API keys of the feed's authenticated connections, checked on a timer: a key is verified only
 * at `auth`, so without this a key disabled or revoked later (here or by the operator CLI, another
 * process) would keep its connections' private channels. One query per check for all held keys.
 */
export class KeyWatch {
  private readonly holders = new Map<number, Set<KeyHolder>>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    private readonly db: Sql,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.check(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  add(keyId: number, holder: KeyHolder): void {
    const set = this.holders.get(keyId) ?? new Set();
    set.add(holder);
    this.holders.set(keyId, set);
  }

  remove(keyId: number, holder: KeyHolder): void {
    const set = this.holders.get(keyId);
    set?.delete(holder);
    if (set?.size === 0) this.holders.delete(keyId);
  }

  /** Withdraws the keys no longer usable from their holders (exported for the timer and tests). */
  async check(): Promise<void> {
    if (this.checking || this.holders.size === 0) return;
    this.checking = true;
    try {
      const { rows } = await this.db.query<{ id: number }>(
        'SELECT id FROM api_keys WHERE id = ANY($1::int[]) AND (NOT enabled OR revoked_at IS NOT NULL)',
        [[...this.holders.keys()]],
      );
      for (const { id } of rows) {
        const set = this.holders.get(id);
        this.holders.delete(id);
        for (const holder of set ?? []) holder.keyWithdrawn();
      }
    } catch (error) {
      this.onError(error);
    } finally {
      this.checking = false;
    }
  }
}
