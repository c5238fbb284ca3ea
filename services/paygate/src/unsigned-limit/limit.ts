import type { Database } from '@platform/sql-storage/database';
import {
  limitSubject,
  type UnsignedLimitSettings,
  type UnsignedVerdict,
  verdict,
  windowStart,
} from './window.js';

/**
 * Counts invoices created without the merchant's signature per client address, in the database so
 * every gateway instance counts against the same windows (migration 053): one upsert per attempt,
 * which restarts the count when the address's row holds an older window.
 */
export class UnsignedInvoiceLimit {
  constructor(
    private readonly db: Database,
    readonly settings: UnsignedLimitSettings,
    private readonly now: () => number,
  ) {}

  /** False when unsigned creates are off (`UNSIGNED_INVOICES_PER_ADDRESS=0`). */
  get allowsAny(): boolean {
    return this.settings.perAddress > 0;
  }

  /** Counts one attempt from `address` and says whether it may go on. */
  async attempt(address: string): Promise<UnsignedVerdict> {
    const nowMs = this.now();
    const start = windowStart(this.settings, nowMs);
    const { rows } = await this.db.query<{ count: number }>(
      `INSERT INTO unsigned_invoice_counters (address, window_start, count) VALUES ($1, $2, 1)
       ON CONFLICT (address) DO UPDATE SET
         count = CASE WHEN unsigned_invoice_counters.window_start = EXCLUDED.window_start
                      THEN unsigned_invoice_counters.count + 1 ELSE 1 END,
         window_start = EXCLUDED.window_start
       RETURNING count`,
      [limitSubject(address), start],
    );
    return verdict(this.settings, Number(rows[0]?.count ?? 1), nowMs);
  }

  /** Forgets the counts of ended windows; returns how many. */
  async purge(limit = 500): Promise<number> {
    const start = windowStart(this.settings, this.now());
    const { rows } = await this.db.query(
      `DELETE FROM unsigned_invoice_counters WHERE address IN (
         SELECT address FROM unsigned_invoice_counters WHERE window_start < $1 LIMIT $2) RETURNING address`,
      [start, limit],
    );
    return rows.length;
  }
}
