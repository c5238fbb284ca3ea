import type { Sql } from '../db/database.js';
import { type FailureLimits, type FailureSubject, type FailureWindow, retryAfterMs } from './limits.js';
import { iso } from './store.js';

/**
 * The counters of failed redemptions (table svc_code_failures, 013_svc_code_failures.sql). They live
 * in the database, so every instance on one database shares them and a restart forgets nothing.
 *
 * An attempt is counted before the code is looked up (a reservation) and the count is given back when
 * the attempt turned out not to be a guess (redeemed, or refused for a reason that needs the whole
 * secret: already redeemed, on hold, ...). Counting first makes the limit hold under concurrency:
 * N parallel guesses each see the others' reservations, so a window never allows more than its
 * limit of wrong codes, however many requests race.
 */

export interface Reservation {
  /** 0 when the attempt may go ahead; else how long the caller must wait (ms). */
  readonly retryAfterMs: number;
  readonly windows: readonly (FailureWindow & { readonly subject: string })[];
}

interface WindowRow {
  kind: FailureSubject;
  subject: string;
  window_start: Date | string;
  failures: number;
}

const RESERVE_SQL = `
INSERT INTO svc_code_failures AS f (kind, subject, window_start, failures)
SELECT k, s, $3::timestamptz, 1 FROM unnest($1::text[], $2::text[]) AS v(k, s)
ON CONFLICT (kind, subject) DO UPDATE
   SET failures = CASE WHEN f.window_start + $4 * interval '1 millisecond' <= $3::timestamptz THEN 1
                       ELSE f.failures + 1 END,
       window_start = CASE WHEN f.window_start + $4 * interval '1 millisecond' <= $3::timestamptz
                           THEN $3::timestamptz ELSE f.window_start END
RETURNING f.kind, f.subject, f.window_start, f.failures`;

/** Counts one attempt for the account and the client address; says whether it may go ahead. */
export async function reserveAttempt(
  db: Sql,
  accountId: number,
  address: string,
  limits: FailureLimits,
  now: number,
): Promise<Reservation> {
  const { rows } = await db.query<WindowRow>(RESERVE_SQL, [
    ['account', 'address'],
    [String(accountId), address],
    iso(now),
    limits.windowMs,
  ]);
  const windows = rows.map((row) => ({
    kind: row.kind,
    subject: row.subject,
    windowStart: (row.window_start instanceof Date ? row.window_start : new Date(row.window_start)).getTime(),
    failures: row.failures,
  }));
  return { retryAfterMs: retryAfterMs(windows, limits, now), windows };
}

/** Gives back the attempt of a reservation that was not a failed guess (same windows only). */
export async function releaseAttempt(db: Sql, reservation: Reservation): Promise<void> {
  for (const window of reservation.windows) {
    await db.query(
      `UPDATE svc_code_failures SET failures = failures - 1
        WHERE kind = $1 AND subject = $2 AND window_start = $3::timestamptz AND failures > 0`,
      [window.kind, window.subject, iso(window.windowStart)],
    );
  }
}
