import { findAccount } from '../accounts/store.js';
import type { Database } from '../db/database.js';
import { WithdrawAddresses } from './service.js';
import { listEntries } from './store.js';
import { operatorEntry } from './view.js';

/** Operator commands on the address book (`npm run admin -- withdraw-address ...`, src/cli/commands.ts). */
export const WITHDRAW_ADDRESS_USAGE = `  withdraw-address list <account>               address book entries of an account, newest first (ended ones too)
  withdraw-address revoke <id>                  ends an entry at once; its withdrawals not yet sending are cancelled`;

export interface WithdrawAddressCommandContext {
  readonly db: Database;
  readonly now?: () => number;
}

/** A refusal for the operator (the CLI turns it into exit code 2). */
export class WithdrawAddressCommandError extends Error {}

/** Runs `withdraw-address <sub> <ref>`; returns what to print. */
export async function runWithdrawAddressCommand(
  ctx: WithdrawAddressCommandContext,
  sub: string | undefined,
  ref: string | undefined,
): Promise<unknown> {
  const now = ctx.now ?? Date.now;
  if (sub === 'list') {
    if (!ref) throw new WithdrawAddressCommandError('name the account by id, e-mail or svcid');
    const account = await findAccount(ctx.db, ref);
    if (!account) throw new WithdrawAddressCommandError(`no account "${ref}"`);
    const entries = await listEntries(ctx.db, account.id, { liveOnly: false });
    return entries.map((entry) => operatorEntry(entry, now()));
  }
  if (sub === 'revoke') {
    if (!ref || !/^\d{1,9}$/.test(ref)) throw new WithdrawAddressCommandError('name the entry by its id');
    // Ending needs no mail and no lock time: the operator's book only ends entries.
    const book = new WithdrawAddresses({ db: ctx.db, lockMs: 0, now });
    const outcome = await book.end(Number(ref), 'revoke');
    if (!outcome.ok) throw new WithdrawAddressCommandError(outcome.detail);
    return {
      ...operatorEntry(outcome.entry, now()),
      canceledWithdrawals: outcome.canceledWithdrawals,
      alreadySending: outcome.alreadySending,
    };
  }
  throw new WithdrawAddressCommandError(WITHDRAW_ADDRESS_USAGE);
}
