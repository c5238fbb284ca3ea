import type { Sql } from '../db/database.js';
import { hit } from './fixed-window.js';
import type { LimitCheck, LimitOutcome, RequestLimiter } from './limiter.js';
import { UNIT_SECONDS } from './rules.js';

/** Statements at once; checks arriving meanwhile leave together in the next one. */
const MAX_STATEMENTS_IN_FLIGHT = 2;
/** Most distinct counters in one statement. */
const MAX_COUNTERS_PER_STATEMENT = 256;
/** How often ended windows are deleted. */
const SWEEP_EVERY_MS = 60_000;

interface Pending {
  readonly checks: readonly LimitCheck[];
  readonly resolve: (outcome: LimitOutcome) => void;
}

/**
 * The limiter of an exchange on PostgreSQL (`RATE_LIMITS_STORE=database`, the default there): the
 * counters are rows of `request_limit_counters` (061), so every process on the database (the nodes
 * of a cluster) counts against the same windows and N nodes together allow what one allows. The
 * windows are those of fixed-window.ts, on the database's clock (one clock for every node). As the
 * gRPC limiter does, concurrent requests share statements: with a slot free a check goes at once,
 * otherwise it leaves with everything queued meanwhile, one upsert per distinct counter.
 */
export class DatabaseLimiter implements RequestLimiter {
  readonly description = 'the database (request_limit_counters, shared by every node)';
  private readonly queue: Pending[] = [];
  private inFlight = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly db: Sql) {
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  check(checks: readonly LimitCheck[]): Promise<LimitOutcome> {
    if (checks.length === 0) return Promise.resolve({ kind: 'decided', verdicts: [] });
    return new Promise((resolve) => {
      this.queue.push({ checks, resolve });
      if (this.inFlight < MAX_STATEMENTS_IN_FLIGHT) void this.send();
    });
  }

  private async send(): Promise<void> {
    if (this.queue.length === 0) return;
    const batch: Pending[] = [];
    // Hits per counter in this statement, in arrival order.
    const hits = new Map<string, { check: LimitCheck; count: number }>();
    while (this.queue.length > 0) {
      const next = this.queue[0]!;
      const fresh = next.checks.filter((c) => !hits.has(keyOf(c))).length;
      if (batch.length > 0 && hits.size + fresh > MAX_COUNTERS_PER_STATEMENT) break;
      this.queue.shift();
      batch.push(next);
      for (const check of next.checks) {
        const entry = hits.get(keyOf(check));
        if (entry) entry.count += 1;
        else hits.set(keyOf(check), { check, count: 1 });
      }
    }
    this.inFlight += 1;
    let outcome: { counts: Map<string, number>; nowSeconds: number } | Error;
    try {
      // In key order: two statements upserting the same counters lock their rows in one order, so
      // they queue behind each other instead of deadlocking.
      const entries = [...hits.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, e]) => e);
      outcome = await this.count(entries);
    } catch (error) {
      outcome = error as Error;
    }
    this.inFlight -= 1;
    void this.send();
    if (outcome instanceof Error) {
      const failed: LimitOutcome = { kind: 'failed', reason: 'unavailable', message: outcome.message };
      for (const pending of batch) pending.resolve(failed);
      return;
    }
    // Each request gets its own place in the counter: the first of the statement's hits sees the
    // count before the statement plus one, the last the final count.
    const { counts, nowSeconds } = outcome;
    const seen = new Map<string, number>();
    for (const pending of batch) {
      const verdicts = pending.checks.map((check) => {
        const key = keyOf(check);
        const before = counts.get(key)! - hits.get(key)!.count + (seen.get(key) ?? 0);
        seen.set(key, (seen.get(key) ?? 0) + 1);
        const unit = UNIT_SECONDS[check.rule.unit];
        const windowStart = Math.floor(nowSeconds / unit) * unit;
        return hit(check.rule, { windowStart, count: before }, nowSeconds * 1000).verdict;
      });
      pending.resolve({ kind: 'decided', verdicts });
    }
  }

  /** Adds each counter's hits in its current window; returns the counts after, and the database's second. */
  private async count(
    entries: readonly { check: LimitCheck; count: number }[],
  ): Promise<{ counts: Map<string, number>; nowSeconds: number }> {
    const { rows } = await this.db.query<{ rule: string; subject: string; count: string; now_s: string }>(
      `WITH now AS (SELECT floor(extract(epoch FROM clock_timestamp()))::bigint AS s),
            hits AS (SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS h(rule, subject, unit, n))
       INSERT INTO request_limit_counters AS c (rule, subject, window_start, window_end, count)
       SELECT h.rule, h.subject, now.s / h.unit * h.unit, now.s / h.unit * h.unit + h.unit, h.n FROM hits h, now
       ON CONFLICT (rule, subject) DO UPDATE
          SET count = CASE WHEN c.window_start = EXCLUDED.window_start THEN c.count + EXCLUDED.count ELSE EXCLUDED.count END,
              window_start = EXCLUDED.window_start, window_end = EXCLUDED.window_end
       RETURNING c.rule, c.subject, c.count::text, (SELECT s FROM now)::text AS now_s`,
      [
        entries.map((e) => e.check.rule.name),
        entries.map((e) => e.check.subject),
        entries.map((e) => UNIT_SECONDS[e.check.rule.unit]),
        entries.map((e) => e.count),
      ],
    );
    return {
      counts: new Map(rows.map((row) => [`${row.rule}\u0000${row.subject}`, Number(row.count)])),
      nowSeconds: Number(rows[0]?.now_s ?? Math.floor(Date.now() / 1000)),
    };
  }

  /** Deletes the counters whose window ended (any node may; deleting twice is harmless). */
  private async sweep(): Promise<void> {
    await this.db
      .query(
        `DELETE FROM request_limit_counters WHERE window_end <= floor(extract(epoch FROM clock_timestamp()))::bigint`,
      )
      .catch(() => undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}

function keyOf(check: LimitCheck): string {
  return `${check.rule.name}\u0000${check.subject}`;
}
