import type { Database } from '../db/database.js';
import type { ActionLinks, IssuedLinks, LinkOutcome } from '../mail/links.js';
import type { Mailer, OutgoingMail } from '../mail/mailer.js';
import { formatAmount } from '../money/decimal.js';
import type { ReferenceData } from '../reference/load.js';
import type { ConfirmationRequest, TransferCodes } from './service.js';
import { type StoredCode, unconfirmedWithoutLinks } from './store.js';

/** The purpose under which transfer codes register their link handler (src/mail/links.ts). */
export const LINK_PURPOSE = 'svc_code';

const amountOf = (code: StoredCode, reference: Pick<ReferenceData, 'ledgerPrecision'>) =>
  `${formatAmount(code.amount, reference.ledgerPrecision(code.currency))} ${code.currency.toUpperCase()}`;

/**
 * The confirmation mail. It carries the amount, the sn and the public segment, never the code: a
 * mailbox is not where a bearer secret should be copied.
 */
export function confirmationMail(
  to: string,
  code: StoredCode,
  links: IssuedLinks,
  reference: Pick<ReferenceData, 'ledgerPrecision'>,
): OutgoingMail {
  const amount = amountOf(code, reference);
  return {
    to,
    subject: `Confirm your transfer code for ${amount}`,
    text: [
      `You created a transfer code for ${amount} (reference ${code.sn}, starting with ${code.publicSegment}).`,
      'The amount is held until the code is redeemed; nobody can redeem it before you confirm it.',
      '',
      `Confirm it: ${links.confirmUrl}`,
      `Cancel it and get the amount back: ${links.cancelUrl}`,
      '',
      `The links work once, until ${links.expiresAt.toISOString()}; unconfirmed by then, the code is cancelled`,
      'and the amount returned. If you did not create this code, cancel it and change your API keys.',
    ].join('\n'),
  };
}

export interface ConfirmationDeps {
  readonly db: Database;
  readonly links: ActionLinks;
  readonly mailer: Mailer;
  readonly reference: ReferenceData;
  readonly now: () => number;
}

/** What the owner's e-mail links do: confirm (unconfirmed -> active) or decline (-> canceled, refund). */
export function registerLinkHandler(codes: TransferCodes, deps: ConfirmationDeps): void {
  deps.links.handle(LINK_PURPOSE, async (tx, subjectId, action): Promise<LinkOutcome> => {
    const outcome = await codes.act(subjectId, action === 'confirm' ? 'confirm' : 'decline', {
      tx,
      note: 'cancelled by the owner (e-mail link)',
    });
    if (!outcome.ok)
      return { ok: false, message: `This transfer code cannot be changed: ${outcome.detail}.` };
    const amount = amountOf(outcome.code, deps.reference);
    return action === 'confirm'
      ? {
          ok: true,
          message: `Transfer code ${outcome.code.sn} for ${amount} is confirmed: it can be redeemed now.`,
        }
      : {
          ok: true,
          message: `Transfer code ${outcome.code.sn} is cancelled; ${amount} is back in your balance.`,
        };
  });
}

/** The confirmation request the service calls for owners with withdraw_confirmation on. */
export function confirmationRequest(deps: ConfirmationDeps): ConfirmationRequest {
  return {
    issue: (tx, code) =>
      deps.links.issue(tx, { purpose: LINK_PURPOSE, subjectId: code.id, accountId: code.ownerId }),
    send: (code, to, issued) =>
      deps.mailer.send(confirmationMail(to, code, issued as IssuedLinks, deps.reference)),
  };
}

/**
 * Cancels (with refund) every unconfirmed code whose links expired unused, each in its own
 * transaction; safe to run from several instances at once (the status guard lets one win).
 * Returns how many codes it cancelled.
 */
export async function expireUnconfirmed(codes: TransferCodes, deps: ConfirmationDeps): Promise<number> {
  let expired = 0;
  for (const id of await unconfirmedWithoutLinks(deps.db, deps.now())) {
    const outcome = await deps.db.transaction(async (tx) => {
      const result = await codes.act(id, 'decline', { tx, note: 'not confirmed in time' });
      if (result.ok) await deps.links.revoke(tx, LINK_PURPOSE, id);
      return result;
    });
    if (outcome.ok) expired += 1;
  }
  return expired;
}
