import type { ActionLinks, IssuedLinks, LinkOutcome } from '../mail/links.js';
import type { Mailer, OutgoingMail } from '../mail/mailer.js';
import type { EntryMail, WithdrawAddresses } from './service.js';
import { type StoredEntry, setConfirmExpiry } from './store.js';

/** The purpose under which address book entries register their link handler (src/mail/links.ts). */
export const LINK_PURPOSE = 'withdraw_address';

/** `86400000` -> `24 hours`; a lock that is not whole hours in seconds. */
export function lockText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} hour${ms === 3_600_000 ? '' : 's'}`;
  return `${ms / 1000} seconds`;
}

/**
 * What the mails show of an entry: currency, address and memo. Never the label: it is free text of
 * whoever called the API (a stolen key), and a mail is where a forged line would be believed.
 */
const destinationOf = (entry: StoredEntry) =>
  `${entry.currency.toUpperCase()} ${entry.address}${entry.memo === null ? '' : ` (memo ${entry.memo})`}`;

export function confirmationMail(
  to: string,
  entry: StoredEntry,
  links: IssuedLinks,
  lockMs: number,
): OutgoingMail {
  return {
    to,
    subject: `Confirm the new ${entry.currency.toUpperCase()} withdrawal address (entry ${entry.id})`,
    text: [
      `A withdrawal address was added to your address book: ${destinationOf(entry)}.`,
      `Once confirmed, it can be used ${lockText(lockMs)} after the confirmation.`,
      '',
      `Confirm it: ${links.confirmUrl}`,
      `Cancel it: ${links.cancelUrl}`,
      '',
      `The links work once, until ${links.expiresAt.toISOString()}; unconfirmed by then, the entry is void.`,
      'If you did not add this address, cancel it and change your API keys.',
    ].join('\n'),
  };
}

/**
 * The notice of an entry that needed no confirmation: the lock is worth something only if the owner
 * hears of the address, and can stop it without an API key (a stolen one added it): the cancel link
 * works until the lock ends (none with a lock of 0).
 */
export function noticeMail(to: string, entry: StoredEntry, links?: IssuedLinks): OutgoingMail {
  return {
    to,
    subject: `A ${entry.currency.toUpperCase()} withdrawal address was added (entry ${entry.id})`,
    text: [
      `A withdrawal address was added to your address book: ${destinationOf(entry)}.`,
      `It can be used from ${entry.usableAt?.toISOString() ?? 'its confirmation'} on.`,
      '',
      ...(links ? [`If you did not add it, cancel it before then: ${links.cancelUrl}`, ''] : []),
      `${links ? 'Or' : 'If you did not add it,'} delete it (POST /v3/auth/withdraw/addresses/delete with`,
      `{"id": ${entry.id}}) or ask support to revoke it, and change your API keys.`,
    ].join('\n'),
  };
}

export interface EntryMailDeps {
  readonly links: ActionLinks;
  readonly mailer: Mailer;
  readonly lockMs: number;
}

export function entryMail(deps: EntryMailDeps): EntryMail {
  return {
    async issue(tx, entry) {
      const issued = await deps.links.issue(tx, {
        purpose: LINK_PURPOSE,
        subjectId: entry.id,
        accountId: entry.accountId,
      });
      await setConfirmExpiry(tx, entry.id, issued.expiresAt);
      return issued;
    },
    send: (entry, to, issued) =>
      deps.mailer.send(confirmationMail(to, entry, issued as IssuedLinks, deps.lockMs)),
    issueNotice: (tx, entry) =>
      deps.links.issue(
        tx,
        { purpose: LINK_PURPOSE, subjectId: entry.id, accountId: entry.accountId },
        entry.usableAt ?? undefined,
      ),
    notify: (entry, to, issued) => deps.mailer.send(noticeMail(to, entry, issued as IssuedLinks | undefined)),
  };
}

/** What the owner's links do: confirm (the lock starts) or cancel (the entry is void). */
export function registerLinkHandler(book: WithdrawAddresses, links: ActionLinks): void {
  links.handle(LINK_PURPOSE, async (tx, id, action): Promise<LinkOutcome> => {
    const outcome = await book.settleLink(tx, id, action === 'confirm' ? 'confirm' : 'decline');
    if (!outcome.ok)
      return { ok: false, message: `This withdrawal address cannot be changed: ${outcome.detail}.` };
    const { entry } = outcome;
    return action === 'confirm'
      ? {
          ok: true,
          message: `Withdrawal address ${entry.address} is confirmed; it can be used from ${entry.usableAt?.toISOString()}.`,
        }
      : { ok: true, message: `Withdrawal address ${entry.address} is cancelled.` };
  });
}
