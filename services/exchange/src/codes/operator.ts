import type { SecretBox } from '../crypto/secret-box.js';
import type { Database } from '../db/database.js';
import { formatAmount } from '../money/decimal.js';
import type { ReferenceData } from '../reference/load.js';
import { DEFAULT_FAILURE_LIMITS } from './limits.js';
import { CODE_STATUSES, type CodeStatus } from './rules.js';
import { TransferCodes } from './service.js';
import { findCodeByRef, type StoredCode } from './store.js';

/** Operator commands on transfer codes (`npm run admin -- code ...`, src/cli/commands.ts). */
export const CODE_USAGE = `  code list [--account <account>] [--status <status>]   transfer codes, newest first (never the code itself)
  code show <code>                              <code> = id, sn or public segment
  code hold <code>                              suspicious: no redemption until released
  code release <code>                           back to the status it was held from
  code cancel <code> --reason <text>            cancelled; the amount goes back to the owner`;

export interface CodeCommandContext {
  readonly db: Database;
  readonly reference: ReferenceData;
  readonly secretBox: SecretBox;
  readonly now?: () => number;
}

/** A refusal for the operator (the CLI turns it into exit code 2). */
export class CodeCommandError extends Error {}

/** What an operator sees of a code: everything but the secret. */
export function operatorView(code: StoredCode, reference: Pick<ReferenceData, 'ledgerPrecision'>) {
  return {
    id: code.id,
    sn: code.sn,
    publicSegment: code.publicSegment,
    ownerId: code.ownerId,
    recipient: code.recipient,
    amount: formatAmount(code.amount, reference.ledgerPrecision(code.currency)),
    currency: code.currency,
    status: code.status,
    heldFrom: code.heldFrom,
    nonRefundableBefore: code.nonRefundableBefore.toISOString(),
    createdAt: code.createdAt.toISOString(),
    redeemedAt: code.redeemedAt?.toISOString() ?? null,
    redeemerId: code.redeemerId,
    canceledAt: code.canceledAt?.toISOString() ?? null,
    comment: code.comment,
  };
}

/** Runs `code <sub> ...`; returns what to print. */
export async function runCodeCommand(
  ctx: CodeCommandContext,
  sub: string | undefined,
  ref: string | undefined,
  options: { account?: string | undefined; status?: string | undefined; reason?: string | undefined },
): Promise<unknown> {
  const view = (code: StoredCode) => operatorView(code, ctx.reference);
  if (sub === 'list') {
    if (options.status && !(CODE_STATUSES as readonly string[]).includes(options.status)) {
      throw new CodeCommandError(`unknown status "${options.status}" (known: ${CODE_STATUSES.join(', ')})`);
    }
    const { rows } = await ctx.db.query<{ id: number }>(
      `SELECT c.id FROM svc_codes c JOIN accounts a ON a.id = c.owner_id
        WHERE ($1::text IS NULL OR a.id::text = $1 OR a.email = lower($1) OR a.svcid = $1)
          AND ($2::text IS NULL OR c.status = $2) ORDER BY c.id DESC LIMIT 1000`,
      [options.account ?? null, (options.status as CodeStatus | undefined) ?? null],
    );
    const codes = [];
    for (const row of rows) codes.push(view((await findCodeByRef(ctx.db, String(row.id)))!));
    return codes;
  }
  if (!ref) throw new CodeCommandError('name the code by id, sn or public segment');
  const code = await findCodeByRef(ctx.db, ref);
  if (!code) throw new CodeCommandError(`no transfer code "${ref}"`);
  if (sub === 'show') return view(code);
  if (sub !== 'hold' && sub !== 'release' && sub !== 'cancel') throw new CodeCommandError(CODE_USAGE);
  if (sub === 'cancel' && !options.reason?.trim()) {
    throw new CodeCommandError('--reason <text> is required: the refund is journalled');
  }
  const codes = new TransferCodes({
    db: ctx.db,
    secretBox: ctx.secretBox,
    limits: DEFAULT_FAILURE_LIMITS,
    now: ctx.now ?? Date.now,
  });
  const outcome = await codes.act(code.id, sub, { note: options.reason?.trim() });
  if (!outcome.ok) throw new CodeCommandError(outcome.detail);
  return view(outcome.code);
}
