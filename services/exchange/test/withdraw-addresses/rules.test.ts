import { createHash } from 'node:crypto';
import { base58 } from '@scure/base';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { canonicalAddress, eip55 } from '../../src/custody/addresses.js';
import {
  checkLabel,
  destinationVerdict,
  type EntryState,
  entryTransition,
  isRestricted,
  memoKey,
  shownStatus,
  usableAt,
} from '../../src/withdraw-addresses/rules.js';

const T = 1_800_000_000_000;
const confirmed = (usable: number): EntryState => ({
  status: 'confirmed',
  usableAt: usable,
  confirmExpiresAt: null,
});
const awaiting = (expires: number): EntryState => ({
  status: 'awaiting_confirmation',
  usableAt: null,
  confirmExpiresAt: expires,
});

describe('address book rules', () => {
  it('shows a confirmed entry locked until usable_at, then active; an unconfirmed one expires with its links', () => {
    expect(shownStatus(confirmed(T + 1), T)).toBe('locked');
    expect(shownStatus(confirmed(T), T)).toBe('active');
    expect(shownStatus(awaiting(T + 1), T)).toBe('awaiting_confirmation');
    expect(shownStatus(awaiting(T), T)).toBe('expired');
    for (const status of ['canceled', 'expired', 'deleted', 'revoked'] as const) {
      expect(shownStatus({ status, usableAt: T - 1, confirmExpiresAt: null }, T)).toBe(status);
    }
    expect(usableAt(T, 86_400_000)).toBe(T + 86_400_000);
    expect(usableAt(T, 0)).toBe(T);
  });

  it('allows a restricted withdrawal only through an active entry', () => {
    expect(destinationVerdict(undefined, T)).toMatchObject({ ok: false, refusal: 'not_allowlisted' });
    expect(destinationVerdict(confirmed(T + 5), T)).toEqual({
      ok: false,
      refusal: 'locked',
      usableAt: T + 5,
    });
    expect(destinationVerdict(confirmed(T), T)).toEqual({ ok: true });
    expect(destinationVerdict(awaiting(T + 5), T)).toMatchObject({
      ok: false,
      refusal: 'not_allowlisted',
      detail: expect.stringContaining('e-mailed confirmation'),
    });
    expect(destinationVerdict(awaiting(T), T)).toMatchObject({ ok: false, refusal: 'not_allowlisted' });
    // A deleted or revoked entry is never the live entry of a destination; if one were handed in, it refuses.
    expect(
      destinationVerdict({ status: 'revoked', usableAt: T - 1, confirmExpiresAt: null }, T),
    ).toMatchObject({ ok: false, refusal: 'not_allowlisted' });
  });

  it('restricts a key without withdraw (withdraw_allowlisted) everywhere and any key of an allow-list-only account', () => {
    expect(isRestricted(['read', 'withdraw'], false)).toBe(false);
    expect(isRestricted(['read', 'withdraw_allowlisted'], false)).toBe(true);
    expect(isRestricted(['read', 'withdraw'], true)).toBe(true);
  });

  it('moves entries: links only while awaiting, delete and revoke from any live status, once', () => {
    expect(entryTransition(awaiting(T + 1), 'confirm', T)).toEqual({ ok: true, status: 'confirmed' });
    expect(entryTransition(awaiting(T + 1), 'decline', T)).toEqual({ ok: true, status: 'canceled' });
    expect(entryTransition(awaiting(T), 'confirm', T)).toMatchObject({ ok: false });
    expect(entryTransition(confirmed(T + 1), 'confirm', T)).toMatchObject({ ok: false });
    expect(entryTransition(confirmed(T + 1), 'delete', T)).toEqual({ ok: true, status: 'deleted' });
    expect(entryTransition(confirmed(T - 1), 'revoke', T)).toEqual({ ok: true, status: 'revoked' });
    expect(entryTransition(awaiting(T + 1), 'revoke', T)).toEqual({ ok: true, status: 'revoked' });
    // The notice's cancel link: only while the lock lasts.
    expect(entryTransition(confirmed(T + 1), 'disown', T)).toEqual({ ok: true, status: 'canceled' });
    expect(entryTransition(confirmed(T), 'disown', T)).toMatchObject({ ok: false });
    expect(entryTransition(awaiting(T + 1), 'disown', T)).toMatchObject({ ok: false });
    const deleted: EntryState = { status: 'deleted', usableAt: T, confirmExpiresAt: null };
    expect(entryTransition(deleted, 'delete', T)).toMatchObject({ ok: false });
    expect(entryTransition(deleted, 'revoke', T)).toMatchObject({ ok: false });
    expect(entryTransition(deleted, 'confirm', T)).toMatchObject({ ok: false });
  });

  it('reads memos by value (an xrp tag as its number) and refuses one on a coin without memos', () => {
    expect(memoKey('xrp', true, ' 007 ')).toEqual({ ok: true, value: '7' });
    expect(memoKey('xrp', true, '')).toEqual({ ok: true, value: null });
    expect(memoKey('xrp', true, undefined)).toEqual({ ok: true, value: null });
    expect(memoKey('xrp', true, '4294967296')).toMatchObject({ ok: false });
    expect(memoKey('xrp', true, '1e3')).toMatchObject({ ok: false });
    expect(memoKey('btc', false, '1')).toMatchObject({ ok: false });
    expect(memoKey('btc', false, '  ')).toEqual({ ok: true, value: null });
  });

  it('takes labels of up to 100 characters without control characters or line breaks', () => {
    expect(checkLabel('  cold wallet ')).toEqual({ ok: true, value: 'cold wallet' });
    expect(checkLabel(undefined)).toEqual({ ok: true, value: '' });
    expect(checkLabel('é'.repeat(100))).toMatchObject({ ok: true });
    expect(checkLabel('x'.repeat(101))).toMatchObject({ ok: false });
    expect(checkLabel('mine\nConfirm it: https://evil.example')).toMatchObject({ ok: false });
    expect(checkLabel('a\u2028b')).toMatchObject({ ok: false });
    expect(checkLabel('a\u0000b')).toMatchObject({ ok: false });
  });
});

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest();
const base58check = (version: number, payload: Uint8Array) => {
  const body = new Uint8Array([version, ...payload]);
  return base58.encode(new Uint8Array([...body, ...sha256(sha256(body)).subarray(0, 4)]));
};

describe('canonical addresses (the sandbox custody, as a node writes them back)', () => {
  const BECH32 = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
  it('makes the spellings of one destination one: bech32 case, EIP-55 case, ltc 3... and M...', () => {
    expect(canonicalAddress('btc', BECH32)).toBe(BECH32);
    expect(canonicalAddress('btc', BECH32.toUpperCase())).toBe(BECH32);
    const hex = '5aaeb6053f3e94c9b9a09f33669435e7ef1beaed';
    expect(canonicalAddress('eth', eip55(hex))).toBe(`0x${hex}`);
    expect(canonicalAddress('eth', `0x${hex.toUpperCase()}`)).toBe(`0x${hex}`);
    const script = new Uint8Array(20).fill(7);
    const m = base58check(0x32, script);
    expect(m.startsWith('M')).toBe(true);
    expect(canonicalAddress('ltc', base58check(0x05, script))).toBe(m);
    expect(canonicalAddress('ltc', m)).toBe(m);
  });

  it('keeps different destinations different and refuses what the custody refuses', () => {
    // A legacy P2PKH address and a bech32 one are two scripts, even of one key: never the same entry.
    const legacy = '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2';
    expect(canonicalAddress('btc', legacy)).toBe(legacy);
    expect(canonicalAddress('btc', legacy)).not.toBe(canonicalAddress('btc', BECH32));
    // base58 is case-sensitive: another case is another (here invalid) address.
    expect(canonicalAddress('btc', legacy.toLowerCase())).toBeUndefined();
    // Mixed-case bech32, a wrong checksum, whitespace inside, another coin's address.
    expect(
      canonicalAddress('btc', `${BECH32.slice(0, 10).toUpperCase()}${BECH32.slice(10)}`),
    ).toBeUndefined();
    expect(canonicalAddress('btc', `${BECH32.slice(0, -1)}r`)).toBeUndefined();
    expect(canonicalAddress('btc', ` ${BECH32}`)).toBeUndefined();
    expect(canonicalAddress('ltc', BECH32)).toBeUndefined();
    // EIP-55 with a wrong mixed case is not the address.
    const wrong = eip55('5aaeb6053f3e94c9b9a09f33669435e7ef1beaed').replace('a', 'A');
    expect(canonicalAddress('eth', wrong)).toBeUndefined();
  });
});

describe('WITHDRAW_ADDRESS_LOCK_S', () => {
  it('defaults to 86400 s and takes 0..2592000, naming the setting otherwise', () => {
    expect(loadConfig({}).withdrawAddresses).toEqual({ lockMs: 86_400_000 });
    expect(loadConfig({ WITHDRAW_ADDRESS_LOCK_S: '0' }).withdrawAddresses.lockMs).toBe(0);
    expect(loadConfig({ WITHDRAW_ADDRESS_LOCK_S: '2592000' }).withdrawAddresses.lockMs).toBe(2_592_000_000);
    for (const bad of ['2592001', '-1', '1.5', 'day']) {
      expect(() => loadConfig({ WITHDRAW_ADDRESS_LOCK_S: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ WITHDRAW_ADDRESS_LOCK_S: bad }), bad).toThrow(/WITHDRAW_ADDRESS_LOCK_S/);
    }
  });
});
