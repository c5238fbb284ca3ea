import { shownStatus } from './rules.js';
import { type StoredEntry, stateOf } from './store.js';

/** The entry object of the API: {id, currency, address, payment_id, label, status, created_at, usable_at}. */
export function entryObject(entry: StoredEntry, now: number) {
  return {
    id: entry.id,
    currency: entry.currency,
    address: entry.address,
    payment_id: entry.memo,
    label: entry.label,
    status: shownStatus(stateOf(entry), now),
    created_at: entry.createdAt.toISOString(),
    usable_at: entry.usableAt?.toISOString() ?? null,
    ended_at: entry.endedAt?.toISOString() ?? null,
  };
}

/** What the operator sees: the entry object with the account, the custody's spelling and the times. */
export function operatorEntry(entry: StoredEntry, now: number) {
  return {
    ...entryObject(entry, now),
    accountId: entry.accountId,
    addressKey: entry.addressKey,
    storedStatus: entry.status,
    confirmExpiresAt: entry.confirmExpiresAt?.toISOString() ?? null,
    confirmedAt: entry.confirmedAt?.toISOString() ?? null,
  };
}
