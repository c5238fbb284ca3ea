import { findAccount } from '../accounts/store.js';
import type { Database } from '../db/database.js';

/**
 * Operator commands on the dead-man's switches (`npm run admin -- switch ...`, src/cli/commands.ts):
 * which keys have one armed, when each fires or fired; and clearing one (as the key's own call with
 * `timeout: 0` does), for a bot whose operator asks support to stop it from cancelling.
 */
export const SWITCH_USAGE = `  switch list [<account>]                       dead-man's switches (cancel-all-after): armed, fired, disabled
  switch clear <public key>                     disables a key's switch (as its own call with timeout 0)`;

export interface SwitchCommandContext {
  readonly db: Database;
  readonly now?: () => number;
}

/** A refusal for the operator (the CLI turns it into exit code 2). */
export class SwitchCommandError extends Error {}

interface SwitchRow {
  public_key: string;
  account_id: number;
  email: string;
  trigger_at: string | null;
  armed_at: string;
  fired_at: string | null;
  fired_by: string | null;
  claimed_by: string | null;
}

const iso = (ms: string | null): string | null => (ms === null ? null : new Date(Number(ms)).toISOString());

/** One switch as the operator reads it: `state` armed (waits for `trigger_time`), fired or disabled. */
function view(row: SwitchRow) {
  const state = row.fired_at !== null ? 'fired' : row.trigger_at !== null ? 'armed' : 'disabled';
  return {
    api_key: row.public_key,
    account: row.account_id,
    email: row.email,
    state,
    armed_at: iso(row.armed_at),
    trigger_time: iso(row.trigger_at),
    fired_at: iso(row.fired_at),
    fired_by: row.fired_by,
    ...(row.claimed_by !== null ? { firing_on: row.claimed_by } : {}),
  };
}

/** Runs `switch <sub> <ref>`; returns what to print. */
export async function runSwitchCommand(
  ctx: SwitchCommandContext,
  sub: string | undefined,
  ref: string | undefined,
): Promise<unknown> {
  if (sub === 'list') {
    let accountId: number | null = null;
    if (ref !== undefined) {
      const account = await findAccount(ctx.db, ref);
      if (!account) throw new SwitchCommandError(`no account "${ref}"`);
      accountId = account.id;
    }
    const { rows } = await ctx.db.query<SwitchRow>(
      `SELECT k.public_key, s.account_id, a.email, s.trigger_at::text, s.armed_at::text, s.fired_at::text,
              s.fired_by, s.claimed_by
         FROM cancel_after s JOIN api_keys k ON k.id = s.api_key_id JOIN accounts a ON a.id = s.account_id
        WHERE $1::integer IS NULL OR s.account_id = $1
        ORDER BY s.trigger_at NULLS LAST, s.api_key_id`,
      [accountId],
    );
    return rows.map(view);
  }
  if (sub === 'clear') {
    if (!ref) throw new SwitchCommandError('name the API key by its public key');
    const now = (ctx.now ?? Date.now)();
    const { rows } = await ctx.db.query<SwitchRow>(
      `UPDATE cancel_after s SET trigger_at = NULL, armed_at = $2, fired_at = NULL, fired_by = NULL,
              claimed_by = NULL, claimed_until = NULL
         FROM api_keys k, accounts a
        WHERE k.id = s.api_key_id AND a.id = s.account_id AND k.public_key = $1
       RETURNING k.public_key, s.account_id, a.email, s.trigger_at::text, s.armed_at::text,
                 s.fired_at::text, s.fired_by, s.claimed_by`,
      [ref, now],
    );
    const row = rows[0];
    if (!row) throw new SwitchCommandError(`no switch for API key "${ref}" (never armed, or no such key)`);
    return view(row);
  }
  throw new SwitchCommandError(SWITCH_USAGE);
}
