import { findAccount } from '../accounts/store.js';
import { type Database, type Sql, sqlState } from '../db/database.js';
import { silentLog, type WalletLog } from '../wallet/context.js';
import type { Destination } from '../wallet/wallet.js';
import { releaseWithdrawal } from '../wallet/withdrawal-store.js';
import {
  type DestinationVerdict,
  destinationVerdict,
  type EntryAction,
  entryTransition,
  MAX_LIVE_ENTRIES,
  memoKey,
  usableAt,
} from './rules.js';
import {
  changeStatus,
  expireUnconfirmed,
  insertEntry,
  listEntries,
  liveEntryCount,
  lockEntry,
  lockLiveEntryFor,
  type StoredEntry,
  stateOf,
  withdrawalsAllowedBy,
} from './store.js';

export type AddressError = 'exists' | 'limit' | 'not_found' | 'mail_failed' | 'state';
export type AddressFailure = { readonly ok: false; readonly error: AddressError; readonly detail: string };
export type EntryOutcome = { readonly ok: true; readonly entry: StoredEntry } | AddressFailure;
export type EndOutcome =
  | {
      readonly ok: true;
      readonly entry: StoredEntry;
      /** Withdrawals the entry allowed that had not started sending: cancelled, funds released. */
      readonly canceledWithdrawals: readonly number[];
      /** Withdrawals it allowed that the custody already has: they cannot be stopped here. */
      readonly alreadySending: readonly number[];
    }
  | AddressFailure;

/** A new entry, already checked: a served coin, the custody's spelling, the memo key, the label. */
export interface NewAddress {
  readonly currency: string;
  /** As typed, trimmed (shown back). */
  readonly address: string;
  readonly addressKey: string;
  readonly memo: string | null;
  readonly label: string;
}

/**
 * The mails of new entries (confirmation.ts): `issue` runs in the creating transaction (links exist
 * exactly when the entry does), `send` after it committed; `notify` tells the owner of an entry that
 * needed no confirmation (the lock is worth something only if the owner hears of the address).
 */
export interface EntryMail {
  issue(tx: Sql, entry: StoredEntry): Promise<unknown>;
  send(entry: StoredEntry, to: string, issued: unknown): Promise<void>;
  /** The notice's cancel link, valid until the entry's lock ends (in the creating transaction). */
  issueNotice(tx: Sql, entry: StoredEntry): Promise<unknown>;
  notify(entry: StoredEntry, to: string, issued: unknown): Promise<void>;
}

export interface WithdrawAddressesOptions {
  readonly db: Database;
  /** WITHDRAW_ADDRESS_LOCK_S in ms */
  readonly lockMs: number;
  /** ms since the epoch */
  readonly now: () => number;
  /** Without it (the operator tool) entries can be listed and ended, not added. */
  readonly mail?: EntryMail;
  readonly log?: WalletLog;
}

const fail = (error: AddressError, detail: string): AddressFailure => ({ ok: false, error, detail });

/** Where each way of ending an entry leaves the withdrawals it allowed. */
type EndAction = 'delete' | 'revoke' | 'disown';

const END_NOTE: Record<EndAction, string> = {
  delete: 'the withdrawal address was deleted from the address book',
  disown: "the withdrawal address was cancelled through the link of the owner's notice",
  revoke: 'the withdrawal address was revoked by an operator',
};

/**
 * The withdrawal address book: entries added by the owner (confirmed by mail when the account
 * confirms withdrawals by mail), usable `lockMs` after their confirmation, ended by the owner or an
 * operator. Ending an entry cancels, in the same transaction, the withdrawals it allowed that have
 * not started sending.
 */
export class WithdrawAddresses {
  constructor(private readonly options: WithdrawAddressesOptions) {}

  get lockMs(): number {
    return this.options.lockMs;
  }

  async add(accountId: number, input: NewAddress): Promise<EntryOutcome> {
    const { db, mail } = this.options;
    const account = await findAccount(db, accountId);
    if (!account) return fail('not_found', 'the account of this API key no longer exists');
    if (!mail) return fail('mail_failed', 'entries cannot be added here: no mail is wired');
    const byMail = account.withdrawConfirmation;
    const now = new Date(this.options.now());
    let issued: unknown;
    let entry: StoredEntry;
    try {
      const created = await db.transaction(async (tx): Promise<EntryOutcome> => {
        await expireUnconfirmed(tx, { accountId, ...input, now });
        if ((await liveEntryCount(tx, accountId)) >= MAX_LIVE_ENTRIES) {
          return fail('limit', `an account keeps at most ${MAX_LIVE_ENTRIES} withdrawal addresses`);
        }
        const row = await insertEntry(tx, {
          accountId,
          ...input,
          now,
          usableAt: byMail ? null : new Date(usableAt(now.getTime(), this.options.lockMs)),
        });
        if (byMail) issued = await mail.issue(tx, row);
        // A lock of 0: usable at once, nothing to cancel before it is (delete through the API).
        else if (this.options.lockMs > 0) issued = await mail.issueNotice(tx, row);
        return { ok: true, entry: row };
      });
      if (!created.ok) return created;
      entry = created.entry;
    } catch (error) {
      if (sqlState(error) === '23505') {
        return fail('exists', 'this address (with this memo) is already in the address book');
      }
      throw error;
    }
    if (byMail) {
      try {
        await mail.send(entry, account.email, issued);
      } catch (error) {
        // Without the mail the entry can never be confirmed: end it rather than leave it waiting.
        this.log.error({ err: error, entry: entry.id }, 'withdrawal address confirmation mail not sent');
        await db.transaction((tx) => changeStatus(tx, entry.id, 'canceled', new Date(this.options.now())));
        return fail('mail_failed', 'the confirmation e-mail could not be sent; the entry was not added');
      }
    } else {
      await mail.notify(entry, account.email, issued).catch((error: unknown) => {
        this.log.error({ err: error, entry: entry.id }, 'withdrawal address notice not sent');
      });
    }
    return { ok: true, entry };
  }

  /** The live entries of an account (optionally of one currency), newest first. */
  /** Live entries, newest first; with `includeEnded` the ended ones too (the owner's history). */
  list(accountId: number, currency?: string, includeEnded = false): Promise<StoredEntry[]> {
    return listEntries(this.options.db, accountId, { currency, liveOnly: !includeEnded });
  }

  /**
   * Ends a live entry: the owner's delete (`ownerId` set: another account's entry is not found) or an
   * operator's revoke. From the commit on no withdrawal can rely on it; those it allowed that had not
   * started sending are cancelled with it.
   */
  async end(id: number, action: 'delete' | 'revoke', ownerId?: number): Promise<EndOutcome> {
    return this.options.db.transaction(async (tx): Promise<EndOutcome> => {
      const entry = await lockEntry(tx, id);
      if (!entry || (ownerId !== undefined && entry.accountId !== ownerId)) {
        return fail('not_found', `no withdrawal address ${id}`);
      }
      return this.endLocked(tx, entry, action, ownerId === undefined ? 'state' : 'not_found');
    });
  }

  /** Ends an entry locked by the caller's transaction, and the withdrawals it allowed not yet sending. */
  private async endLocked(
    tx: Sql,
    entry: StoredEntry,
    action: EndAction,
    refusal: 'state' | 'not_found',
  ): Promise<EndOutcome> {
    const now = this.options.now();
    const next = entryTransition(stateOf(entry), action, now);
    if (!next.ok) return fail(refusal, next.detail);
    const ended = await changeStatus(tx, entry.id, next.status, new Date(now));
    const canceledWithdrawals: number[] = [];
    const alreadySending: number[] = [];
    for (const withdrawal of await withdrawalsAllowedBy(tx, entry.id)) {
      const released =
        withdrawal.status !== 'sending' &&
        (await releaseWithdrawal(tx, withdrawal.id, 'canceled', END_NOTE[action], [
          'awaiting_confirmation',
          'queued',
        ]));
      (released ? canceledWithdrawals : alreadySending).push(withdrawal.id);
    }
    if (alreadySending.length > 0) {
      this.log.warn(
        { entry: entry.id, withdrawals: alreadySending },
        'withdrawal address ended while withdrawals it allowed were already sending',
      );
    }
    return { ok: true, entry: ended, canceledWithdrawals, alreadySending };
  }

  /** The owner's e-mailed link (confirm or cancel), in the link's transaction. */
  async settleLink(
    tx: Sql,
    id: number,
    action: Extract<EntryAction, 'confirm' | 'decline'>,
  ): Promise<EntryOutcome> {
    const entry = await lockEntry(tx, id);
    if (!entry) return fail('not_found', `no withdrawal address ${id}`);
    // The cancel link of a notice (the entry needed no confirmation): ends it as a delete does.
    if (action === 'decline' && entry.status === 'confirmed') {
      return this.endLocked(tx, entry, 'disown', 'state');
    }
    const now = this.options.now();
    const next = entryTransition(stateOf(entry), action, now);
    if (!next.ok) return fail('state', next.detail);
    const usable = next.status === 'confirmed' ? new Date(usableAt(now, this.options.lockMs)) : null;
    return { ok: true, entry: await changeStatus(tx, id, next.status, new Date(now), usable) };
  }

  /**
   * Inside a withdrawal's transaction: the live entry of its destination (share-locked until that
   * transaction ends, see `lockLiveEntryFor`) and whether it allows the withdrawal now.
   */
  async verdict(
    tx: Sql,
    destination: Destination,
  ): Promise<{ entry?: StoredEntry; verdict: DestinationVerdict }> {
    const memo = memoKey(destination.currency, true, destination.memo);
    const entry = memo.ok ? await lockLiveEntryFor(tx, { ...destination, memo: memo.value }) : undefined;
    const verdict = destinationVerdict(entry && stateOf(entry), this.options.now());
    return entry ? { entry, verdict } : { verdict };
  }

  private get log(): WalletLog {
    return this.options.log ?? silentLog;
  }
}
