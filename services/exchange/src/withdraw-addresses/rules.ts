/**
 * Rules of the withdrawal address book (pure; the clock is an argument): an entry's states and what
 * moves it, when it is usable, who is restricted to it, and how a memo and a label are read. See the
 * README ("Withdrawal address book") for the diagram and the attacker's view.
 */

/** What the table stores (`withdraw_addresses.status`). */
export const STORED_STATUSES = [
  'awaiting_confirmation',
  'confirmed',
  'canceled',
  'expired',
  'deleted',
  'revoked',
] as const;
export type StoredStatus = (typeof STORED_STATUSES)[number];

/** Statuses of an entry that still counts: one per destination, and the only ones a withdrawal may use. */
export const LIVE_STATUSES: readonly StoredStatus[] = ['awaiting_confirmation', 'confirmed'];

/** What the API shows: a confirmed entry is `locked` until `usable_at`, then `active`. */
export type ShownStatus = Exclude<StoredStatus, 'confirmed'> | 'locked' | 'active';

export interface EntryState {
  readonly status: StoredStatus;
  /** ms; set once confirmed */
  readonly usableAt: number | null;
  /** ms; an entry awaiting its e-mailed confirmation is dead from then on */
  readonly confirmExpiresAt: number | null;
}

export function shownStatus(entry: EntryState, now: number): ShownStatus {
  switch (entry.status) {
    case 'awaiting_confirmation':
      return entry.confirmExpiresAt !== null && now >= entry.confirmExpiresAt
        ? 'expired'
        : 'awaiting_confirmation';
    case 'confirmed':
      return entry.usableAt !== null && now >= entry.usableAt ? 'active' : 'locked';
    default:
      return entry.status;
  }
}

/** When an entry confirmed at `confirmedAt` becomes usable. */
export function usableAt(confirmedAt: number, lockMs: number): number {
  return confirmedAt + lockMs;
}

/**
 * Is a withdrawal of this key on this account restricted to the address book? A key with the
 * `withdraw_allowlisted` scope (instead of `withdraw`) always is; any key is on an account with
 * `withdraw_allowlist_only`.
 */
export function isRestricted(keyScopes: readonly string[], allowlistOnly: boolean): boolean {
  return allowlistOnly || !keyScopes.includes('withdraw');
}

export type DestinationVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly refusal: 'not_allowlisted'; readonly detail: string }
  | { readonly ok: false; readonly refusal: 'locked'; readonly usableAt: number };

/**
 * May a restricted withdrawal go to the destination whose live entry (if any) is `entry`? Only a
 * confirmed entry past its lock; an entry still waiting for its e-mailed confirmation is no entry yet.
 */
export function destinationVerdict(entry: EntryState | undefined, now: number): DestinationVerdict {
  if (!entry) {
    return { ok: false, refusal: 'not_allowlisted', detail: 'the address is not in the address book' };
  }
  const shown = shownStatus(entry, now);
  if (shown === 'active') return { ok: true };
  if (shown === 'locked') return { ok: false, refusal: 'locked', usableAt: entry.usableAt! };
  if (shown === 'awaiting_confirmation') {
    return {
      ok: false,
      refusal: 'not_allowlisted',
      detail: 'the address book entry is waiting for its e-mailed confirmation',
    };
  }
  return { ok: false, refusal: 'not_allowlisted', detail: `the address book entry is ${shown}` };
}

/**
 * `confirm`: the owner's e-mailed confirm link; `decline`: its cancel link; `disown`: the cancel link
 * of the notice an entry that needed no confirmation sends (valid while it is locked); `delete`: the
 * owner (API); `revoke`: an operator. Ending an entry is allowed from any live status.
 */
export type EntryAction = 'confirm' | 'decline' | 'disown' | 'delete' | 'revoke';

export type EntryTransition =
  | { readonly ok: true; readonly status: StoredStatus }
  | { readonly ok: false; readonly detail: string };

export function entryTransition(entry: EntryState, action: EntryAction, now: number): EntryTransition {
  const shown = shownStatus(entry, now);
  switch (action) {
    case 'confirm':
    case 'decline':
      // The links expire with `confirm_expires_at`; a late one (if the links outlived it) changes nothing.
      if (shown !== 'awaiting_confirmation') {
        return { ok: false, detail: `the entry is ${shown}, not awaiting confirmation` };
      }
      return { ok: true, status: action === 'confirm' ? 'confirmed' : 'canceled' };
    case 'disown':
      // The notice's link expires with the lock; an entry already usable is deleted through the API.
      if (shown !== 'locked') return { ok: false, detail: `the entry is ${shown}, not locked` };
      return { ok: true, status: 'canceled' };
    case 'delete':
    case 'revoke':
      if (!LIVE_STATUSES.includes(entry.status)) return { ok: false, detail: `the entry is ${shown}` };
      return { ok: true, status: action === 'delete' ? 'deleted' : 'revoked' };
  }
}

export type Checked<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly detail: string };

const XRP_TAG = /^\d{1,10}$/;

/**
 * The memo an entry stores, and the key a withdrawal's memo is compared by: trimmed, empty = none;
 * an xrp destination tag as its number (`007` and `7` are one tag). A coin without memos takes none.
 */
export function memoKey(
  currency: string,
  hasMemo: boolean,
  raw: string | null | undefined,
): Checked<string | null> {
  const memo = raw?.trim() ?? '';
  if (memo === '') return { ok: true, value: null };
  if (!hasMemo) return { ok: false, detail: `${currency} takes no memo (payment_id)` };
  if (currency === 'xrp') {
    if (!XRP_TAG.test(memo) || BigInt(memo) > 4_294_967_295n) {
      return { ok: false, detail: 'an xrp destination tag is an integer from 0 to 4294967295' };
    }
    return { ok: true, value: BigInt(memo).toString() };
  }
  return { ok: true, value: memo };
}

export const MAX_LABEL_LENGTH = 100;

/**
 * A label is the owner's note, shown back by the API (never put in a mail): trimmed, at most 100
 * characters, no control characters (a line break would let a label pose as text of its own).
 */
export function checkLabel(raw: string | undefined): Checked<string> {
  const label = (raw ?? '').trim();
  if ([...label].length > MAX_LABEL_LENGTH) {
    return { ok: false, detail: `label is longer than ${MAX_LABEL_LENGTH} characters` };
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(label)) {
    return { ok: false, detail: 'label may not contain control characters or line breaks' };
  }
  return { ok: true, value: label };
}

/** Live entries an account may keep (a bound on what one key can make the account store). */
export const MAX_LIVE_ENTRIES = 200;
