import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { base58 } from '@scure/base';
import { describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/apikeys/store.js';
import { CliError, runCli } from '../../src/cli/commands.js';
import { eip55, generateAddress } from '../../src/custody/addresses.js';
import { transitionWithdrawal } from '../../src/wallet/withdrawal-store.js';
import { linksOf } from '../support/smtp-sink.js';
import { reference, secretBox, type Target } from '../support/targets.js';
import { balanceMap, expectReconciled } from '../wallet/support.js';
import { fundedAccount, httpClient, keyOf, useBookServers } from './support.js';

const BTC = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
const LEGACY_BTC = '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2';
const XRP = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh';
const LOCK_MS = 2_000;

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest();
/** One ltc P2SH script in its old `3...` and its `M...` spelling. */
function ltcP2sh(): { old: string; current: string } {
  const script = randomBytes(20);
  const encode = (version: number) => {
    const body = new Uint8Array([version, ...script]);
    return base58.encode(new Uint8Array([...body, ...sha256(sha256(body)).subarray(0, 4)]));
  };
  return { old: encode(0x05), current: encode(0x32) };
}

const btcWithdrawal = (address: string, amount = '0.01') => ({ withdraw_type: 'btc', amount, address });

/**
 * The withdrawal address book through real signed HTTP calls on a listening server: a server with a
 * lock of 0 (`open`) and one with a lock of 2 s (`locked`), mail to a real SMTP server, the operator
 * tool in-process, and what a stolen key tries.
 */
export function bookContract(target: Target): void {
  describe(`withdrawal address book (${target.name})`, () => {
    const servers = useBookServers(target, { open: 0, locked: LOCK_MS });
    const open = () => servers.server('open');
    const locked = () => servers.server('locked');
    const db = () => target.db();
    const admin = async (...argv: string[]) => {
      let output: unknown;
      await runCli(argv, { db: db(), reference, secretBox, print: (value) => (output = value) });
      // biome-ignore lint/suspicious/noExplicitAny: the printed JSON
      return output as any;
    };
    const mailTo = (email: string, subject: string) =>
      servers
        .sink()
        .waitFor((m) => JSON.stringify(m.to).includes(email) && (m.subject ?? '').includes(subject));
    const postLink = (server: () => { url: string }, url: string) =>
      fetch(`${server().url}${new URL(url).pathname}`, {
        method: 'POST',
        headers: { accept: 'application/json' },
      });
    const sentTransfers = async (accountId: number) =>
      (
        await db().query<{ n: number }>(
          `SELECT count(*)::int AS n FROM sandbox_transfers t JOIN withdrawals w ON w.tag = t.tag
            WHERE w.account_id = $1`,
          [accountId],
        )
      ).rows[0]!.n;

    it('a withdraw_allowlisted key sends only to active entries and can change nothing; elsewhere 403, nothing moves', async () => {
      const account = await fundedAccount(db());
      const owner = await keyOf(db(), account.id, ['read', 'withdraw'], open);
      const bot = await keyOf(db(), account.id, ['read', 'withdraw_allowlisted'], open);

      const byBot = await bot('/v3/auth/withdraw/addresses', { currency: 'btc', address: BTC });
      expect(byBot.status).toBe(403);
      expect(byBot.body.error.name).toBe('scope_missing');

      const added = await owner('/v3/auth/withdraw/addresses', {
        currency: 'BTC',
        address: BTC,
        label: 'cold wallet',
      });
      expect(added.status, JSON.stringify(added.body)).toBe(200);
      expect(added.body).toEqual({
        id: expect.any(Number),
        currency: 'btc',
        address: BTC,
        payment_id: null,
        label: 'cold wallet',
        status: 'active',
        created_at: expect.any(String),
        usable_at: added.body.created_at,
        ended_at: null,
      });
      // The owner hears of it (no confirmation is needed on this account); the label is not in the mail.
      const notice = await mailTo(account.email, `(entry ${added.body.id})`);
      expect(notice.text).toContain(BTC);
      expect(notice.text).not.toContain('cold wallet');
      expect((await bot('/v3/auth/withdraw/addresses/list')).body).toEqual([added.body]);

      const before = await balanceMap(db(), account.id);
      const elsewhere = await bot('/v3/auth/withdraw', btcWithdrawal(generateAddress('btc')));
      expect(elsewhere.status).toBe(403);
      expect(elsewhere.body).toEqual({
        error: { code: 3050, name: 'address_not_allowlisted', message: expect.any(String) },
      });
      expect(await balanceMap(db(), account.id)).toEqual(before);

      for (const [path, body] of [
        ['/v3/auth/withdraw/addresses/delete', { id: added.body.id }],
        ['/v3/auth/svc_codes', { amount: '0.01', currency: 'btc' }],
        [
          '/v3/auth/withdraw',
          {
            withdraw_type: 'uah',
            amount: '100',
            gateway: 'payment_card_uah',
            fields: { card_number: '4242424242424242' },
          },
        ],
      ] as const) {
        const refused = await bot(path, body);
        expect(refused.status, path).toBe(403);
        expect(refused.body.error.name, path).toBe('scope_missing');
      }
      expect(await balanceMap(db(), account.id)).toEqual(before);

      const sent = await bot('/v3/auth/withdraw', btcWithdrawal(BTC));
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
      expect(sent.body).toMatchObject([{ status: 'pending', withdrawal_id: expect.any(Number) }]);
      await open().wallet.tick();
      const details = await owner('/v3/auth/withdraw/details', { id: sent.body[0].withdrawal_id });
      expect(details.body).toMatchObject({ destination: BTC, txid: expect.stringMatching(/^[0-9a-f]{64}$/) });
      // The account is not allow-list-only: its withdraw key still sends anywhere.
      expect((await owner('/v3/auth/withdraw', btcWithdrawal(generateAddress('btc')))).status).toBe(200);
      await expectReconciled(db());
    });

    it('locks a new entry for WITHDRAW_ADDRESS_LOCK_S: address_locked with usable_at, then usable', async () => {
      const account = await fundedAccount(db());
      const owner = await keyOf(db(), account.id, ['read', 'withdraw'], locked);
      const bot = await keyOf(db(), account.id, ['withdraw_allowlisted'], locked);
      const added = await owner('/v3/auth/withdraw/addresses', { currency: 'btc', address: BTC });
      expect(added.body.status).toBe('locked');
      expect(Date.parse(added.body.usable_at) - Date.parse(added.body.created_at)).toBe(LOCK_MS);

      const before = await balanceMap(db(), account.id);
      const early = await bot('/v3/auth/withdraw', btcWithdrawal(BTC));
      expect(early.status).toBe(403);
      expect(early.body).toEqual({
        error: {
          code: 3051,
          name: 'address_locked',
          message: expect.stringContaining(added.body.usable_at),
          usable_at: added.body.usable_at,
        },
      });
      expect(await balanceMap(db(), account.id)).toEqual(before);

      await sleep(Math.max(0, Date.parse(added.body.usable_at) - Date.now()) + 20);
      expect((await owner('/v3/auth/withdraw/addresses/list', { currency: 'btc' })).body).toMatchObject([
        { id: added.body.id, status: 'active' },
      ]);
      expect((await bot('/v3/auth/withdraw', btcWithdrawal(BTC))).status).toBe(200);
    });

    it('the notice of an entry that needed no confirmation carries a cancel link, valid while it is locked', async () => {
      const account = await fundedAccount(db());
      const thief = await keyOf(db(), account.id, ['read', 'withdraw'], locked);
      const bot = await keyOf(db(), account.id, ['withdraw_allowlisted'], locked);
      const added = (await thief('/v3/auth/withdraw/addresses', { currency: 'btc', address: BTC })).body;
      expect(added.status).toBe('locked');
      const notice = await mailTo(account.email, `(entry ${added.id})`);
      const links = linksOf(notice);
      expect(links).toHaveLength(1);
      const cancelled = await postLink(locked, links[0]!);
      expect(cancelled.status).toBe(200);
      expect(await cancelled.json()).toMatchObject({ message: expect.stringContaining('cancelled') });
      expect((await thief('/v3/auth/withdraw/addresses/list')).body).toEqual([]);
      expect((await thief('/v3/auth/withdraw/addresses/list', { include_ended: true })).body).toMatchObject([
        { id: added.id, status: 'canceled' },
      ]);
      await sleep(Math.max(0, Date.parse(added.usable_at) - Date.now()) + 20);
      expect((await bot('/v3/auth/withdraw', btcWithdrawal(BTC))).body.error.name).toBe(
        'address_not_allowlisted',
      );
      expect((await postLink(locked, links[0]!)).status).toBe(410);

      // Once the lock is over the link no longer works: the entry is deleted through the API then.
      const second = (await thief('/v3/auth/withdraw/addresses', { currency: 'btc', address: BTC })).body;
      const [late] = linksOf(await mailTo(account.email, `(entry ${second.id})`));
      await sleep(Math.max(0, Date.parse(second.usable_at) - Date.now()) + 20);
      expect((await postLink(locked, late!)).status).toBe(410);
      expect((await thief('/v3/auth/withdraw/addresses/list')).body).toMatchObject([
        { id: second.id, status: 'active' },
      ]);
    });

    it('with e-mail confirmation on, an entry waits for its link; the lock starts at the confirmation', async () => {
      const account = await fundedAccount(db(), { withdrawConfirmation: true });
      const owner = await keyOf(db(), account.id, ['read', 'withdraw'], locked);
      const bot = await keyOf(db(), account.id, ['withdraw_allowlisted'], locked);
      const added = await owner('/v3/auth/withdraw/addresses', { currency: 'btc', address: BTC, label: 'x' });
      expect(added.body).toMatchObject({ status: 'awaiting_confirmation', usable_at: null });
      const mail = await mailTo(
        account.email,
        `Confirm the new BTC withdrawal address (entry ${added.body.id})`,
      );
      expect(mail.text).toContain(BTC);
      expect(mail.text).toContain('2 seconds after the confirmation');
      const [confirm, cancel] = linksOf(mail);

      const waiting = await bot('/v3/auth/withdraw', btcWithdrawal(BTC));
      expect(waiting.status).toBe(403);
      expect(waiting.body.error).toMatchObject({
        name: 'address_not_allowlisted',
        message: expect.stringContaining('confirmation'),
      });
      // Showing the page (a mail scanner) changes nothing.
      const page = await fetch(`${locked().url}${new URL(confirm!).pathname}`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain(`withdrawal address book entry #${added.body.id}`);
      expect((await owner('/v3/auth/withdraw/addresses/list')).body[0].status).toBe('awaiting_confirmation');

      const confirmedFrom = Date.now();
      const used = await postLink(locked, confirm!);
      expect(used.status).toBe(200);
      expect(await used.json()).toMatchObject({
        purpose: 'withdraw_address',
        subject_id: added.body.id,
        ok: true,
      });
      const [entry] = (await owner('/v3/auth/withdraw/addresses/list')).body;
      expect(entry.status).toBe('locked');
      expect(Date.parse(entry.usable_at)).toBeGreaterThanOrEqual(confirmedFrom + LOCK_MS);
      expect(Date.parse(entry.usable_at)).toBeLessThanOrEqual(Date.now() + LOCK_MS);
      expect((await postLink(locked, confirm!)).status).toBe(410);
      expect((await postLink(locked, cancel!)).status).toBe(410);
      expect((await bot('/v3/auth/withdraw', btcWithdrawal(BTC))).body.error.name).toBe('address_locked');
      await sleep(Math.max(0, Date.parse(entry.usable_at) - Date.now()) + 20);
      // The withdrawal itself is still confirmed by mail, as every withdrawal of this account.
      const sent = await bot('/v3/auth/withdraw', btcWithdrawal(BTC));
      expect(sent.body).toMatchObject([{ status: 'awaiting_confirmation' }]);

      // The cancel link voids an entry; the address can be added again (a new entry, a new lock).
      const other = generateAddress('btc');
      const second = await owner('/v3/auth/withdraw/addresses', { currency: 'btc', address: other });
      const [, cancelSecond] = linksOf(await mailTo(account.email, `(entry ${second.body.id})`));
      expect(await (await postLink(locked, cancelSecond!)).json()).toMatchObject({
        ok: true,
        action: 'cancel',
      });
      const listed = (await owner('/v3/auth/withdraw/addresses/list')).body;
      expect(listed.map((e: { id: number }) => e.id)).toEqual([added.body.id]);
      expect((await bot('/v3/auth/withdraw', btcWithdrawal(other))).body.error.name).toBe(
        'address_not_allowlisted',
      );
      expect((await owner('/v3/auth/withdraw/addresses', { currency: 'btc', address: other })).status).toBe(
        200,
      );

      // With a lock of 0 the confirmation makes the entry usable at once.
      const third = await owner('/v3/auth/withdraw/addresses', {
        currency: 'eth',
        address: generateAddress('eth'),
      });
      const [confirmThird] = linksOf(await mailTo(account.email, `(entry ${third.body.id})`));
      expect((await postLink(open, confirmThird!)).status).toBe(200);
      const shown = (await owner('/v3/auth/withdraw/addresses/list', { currency: 'eth' })).body;
      expect(shown).toMatchObject([{ id: third.body.id, status: 'active' }]);
    });

    it('an allow-list-only account restricts every key: a stolen withdraw key cannot use what it adds, nor transfer codes; fiat is unaffected', async () => {
      const account = await fundedAccount(db());
      const updated = await admin('account', 'update', account.email, '--withdraw-allowlist-only', 'true');
      expect(updated).toMatchObject({ withdrawAllowlistOnly: true });
      await expect(
        admin('account', 'update', account.email, '--withdraw-allowlist-only', 'yes'),
      ).rejects.toThrow(CliError);
      const thief = await keyOf(db(), account.id, ['read', 'withdraw'], locked);
      expect((await thief('/v3/auth/me')).body).toMatchObject({ withdraw_allowlist_only: true });
      const before = await balanceMap(db(), account.id);
      const mine = generateAddress('btc');

      expect((await thief('/v3/auth/withdraw', btcWithdrawal(mine))).body.error.name).toBe(
        'address_not_allowlisted',
      );
      const added = await thief('/v3/auth/withdraw/addresses', { currency: 'btc', address: mine });
      expect(added.body.status).toBe('locked');
      await mailTo(account.email, `(entry ${added.body.id})`);
      expect((await thief('/v3/auth/withdraw', btcWithdrawal(mine))).body.error.name).toBe('address_locked');
      const code = await thief('/v3/auth/svc_codes', { amount: '0.5', currency: 'btc' });
      expect(code.status).toBe(403);
      expect(code.body.error.name).toBe('address_not_allowlisted');
      expect(await balanceMap(db(), account.id)).toEqual(before);

      // Fiat goes its own way (saved fund sources, the gateway): here the gateway is down, so 502.
      const fiat = await thief('/v3/auth/withdraw', {
        withdraw_type: 'uah',
        amount: '100',
        gateway: 'payment_card_uah',
        fields: { card_number: '4242424242424242' },
      });
      expect(fiat.status).toBe(502);
      expect(fiat.body.error.name).toBe('gateway_unavailable');
      expect((await thief('/v3/auth/fund_sources/list', {})).status).toBe(200);

      // The owner sees the notice and has the entry revoked before its lock ends: it never works.
      const revoked = await admin('withdraw-address', 'revoke', String(added.body.id));
      expect(revoked).toMatchObject({ id: added.body.id, status: 'revoked', canceledWithdrawals: [] });
      await sleep(LOCK_MS + 50);
      expect((await thief('/v3/auth/withdraw', btcWithdrawal(mine))).body.error.name).toBe(
        'address_not_allowlisted',
      );
      expect(await balanceMap(db(), account.id)).toEqual(before);
    });

    it('matches destinations the way the custody reads them: case, whitespace, ltc P2SH forms, xrp tags; bech32 and legacy stay apart', async () => {
      const account = await fundedAccount(db());
      const owner = await keyOf(db(), account.id, ['read', 'withdraw'], open);
      const bot = await keyOf(db(), account.id, ['withdraw_allowlisted'], open);
      const add = (body: Record<string, unknown>) => owner('/v3/auth/withdraw/addresses', body);
      expect((await add({ currency: 'btc', address: `  ${BTC}\t` })).body).toMatchObject({ address: BTC });
      expect((await bot('/v3/auth/withdraw', btcWithdrawal(BTC.toUpperCase()))).status).toBe(200);
      expect((await bot('/v3/auth/withdraw', btcWithdrawal(` ${BTC} `))).status).toBe(200);
      const legacy = await bot('/v3/auth/withdraw', btcWithdrawal(LEGACY_BTC));
      expect(legacy.body.error.name).toBe('address_not_allowlisted');
      const again = await add({ currency: 'btc', address: BTC.toUpperCase() });
      expect(again.status).toBe(409);
      expect(again.body.error.name).toBe('withdraw_address_exists');

      const hex = randomBytes(20).toString('hex');
      expect((await add({ currency: 'eth', address: eip55(hex) })).status).toBe(200);
      const eth = { withdraw_type: 'eth', amount: '0.1', address: `0x${hex}` };
      expect((await bot('/v3/auth/withdraw', eth)).status).toBe(200);
      expect((await add({ currency: 'eth', address: `0x${hex}` })).status).toBe(409);

      const p2sh = ltcP2sh();
      expect((await add({ currency: 'ltc', address: p2sh.old })).status).toBe(200);
      const ltc = { withdraw_type: 'ltc', amount: '0.1', address: p2sh.current };
      expect((await bot('/v3/auth/withdraw', ltc)).status).toBe(200);

      // An exchange's shared address is many destinations, one per tag: the tag is part of the entry.
      expect((await add({ currency: 'xrp', address: XRP, payment_id: '7' })).body).toMatchObject({
        payment_id: '7',
      });
      const xrp = (payment_id?: string) => ({
        withdraw_type: 'xrp',
        amount: '25',
        address: XRP,
        ...(payment_id === undefined ? { allow_blank_memo: true } : { payment_id }),
      });
      expect((await bot('/v3/auth/withdraw', xrp('007'))).status).toBe(200);
      expect((await bot('/v3/auth/withdraw', xrp('8'))).body.error.name).toBe('address_not_allowlisted');
      expect((await bot('/v3/auth/withdraw', xrp())).body.error.name).toBe('address_not_allowlisted');
      expect((await add({ currency: 'xrp', address: XRP, payment_id: '07' })).status).toBe(409);
      expect((await add({ currency: 'xrp', address: XRP })).status).toBe(200);

      for (const [body, status, name] of [
        [{ currency: 'btc', address: BTC, payment_id: '1' }, 400, 'invalid_memo'],
        [{ currency: 'btc', address: `${BTC.slice(0, -1)}r` }, 400, 'invalid_address'],
        [{ currency: 'btc', address: '   ' }, 400, 'invalid_address'],
        [{ currency: 'ltc', address: BTC }, 400, 'invalid_address'],
        [{ currency: 'uah', address: BTC }, 400, 'not_a_coin'],
        [{ currency: 'doge', address: BTC }, 404, 'unknown_currency'],
        [
          { currency: 'btc', address: generateAddress('btc'), label: 'a\nConfirm it: http://x' },
          400,
          'validation_failed',
        ],
      ] as const) {
        const refused = await add(body);
        expect(refused.status, JSON.stringify(body)).toBe(status);
        expect(refused.body.error.name, JSON.stringify(body)).toBe(name);
      }
      expect((await owner('/v3/auth/withdraw/addresses/list', { currency: 'doge' })).status).toBe(404);
      expect((await owner('/v3/auth/withdraw/addresses/list')).body).toHaveLength(5);
    });

    it('a deleted or revoked entry stops working at once and cancels the withdrawals it allowed that are not sending', async () => {
      const account = await fundedAccount(db());
      const owner = await keyOf(db(), account.id, ['read', 'withdraw'], open);
      const bot = await keyOf(db(), account.id, ['withdraw_allowlisted'], open);
      const start = await balanceMap(db(), account.id);
      const entry = (await owner('/v3/auth/withdraw/addresses', { currency: 'btc', address: BTC })).body;
      const queued = (await bot('/v3/auth/withdraw', btcWithdrawal(BTC))).body[0].withdrawal_id as number;

      // Another account's key cannot see or end it.
      const stranger = await fundedAccount(db());
      const strangerKey = await keyOf(db(), stranger.id, ['read', 'withdraw'], open);
      const foreign = await strangerKey('/v3/auth/withdraw/addresses/delete', { id: entry.id });
      expect(foreign.status).toBe(404);
      expect(foreign.body.error.name).toBe('not_found');
      expect((await strangerKey('/v3/auth/withdraw/addresses/list')).body).toEqual([]);

      const deleted = await owner('/v3/auth/withdraw/addresses/delete', { id: entry.id });
      expect(deleted.body).toMatchObject({ id: entry.id, status: 'deleted' });
      expect((await owner('/v3/auth/withdraw/details', { id: queued })).body.status).toBe('canceled');
      expect(await balanceMap(db(), account.id)).toEqual(start);
      expect((await bot('/v3/auth/withdraw', btcWithdrawal(BTC))).body.error.name).toBe(
        'address_not_allowlisted',
      );
      expect((await owner('/v3/auth/withdraw/addresses/delete', { id: entry.id })).status).toBe(404);
      expect((await owner('/v3/auth/withdraw/addresses/list')).body).toEqual([]);
      // The owner's history: ended entries with include_ended, when they ended; never another's.
      const history = (await owner('/v3/auth/withdraw/addresses/list', { include_ended: true })).body;
      expect(history).toMatchObject([{ id: entry.id, status: 'deleted', address: BTC }]);
      expect(Date.parse(history[0].ended_at)).toBeGreaterThan(0);
      expect(entry.ended_at).toBeNull();
      expect((await strangerKey('/v3/auth/withdraw/addresses/list', { include_ended: true })).body).toEqual(
        [],
      );
      expect(
        (await owner('/v3/auth/withdraw/addresses/list', { include_ended: 'yes' })).body.error.name,
      ).toBe('validation_failed');
      await open().wallet.tick();
      expect(await sentTransfers(account.id)).toBe(0);

      // A withdrawal already claimed by the sender cannot be stopped: the operator is told.
      const second = (await owner('/v3/auth/withdraw/addresses', { currency: 'btc', address: BTC })).body;
      const claimed = (await bot('/v3/auth/withdraw', btcWithdrawal(BTC))).body[0].withdrawal_id as number;
      const pending = (await bot('/v3/auth/withdraw', btcWithdrawal(BTC, '0.02'))).body[0]
        .withdrawal_id as number;
      await db().transaction((tx) => transitionWithdrawal(tx, claimed, ['queued'], 'sending'));
      const revoked = await admin('withdraw-address', 'revoke', String(second.id));
      expect(revoked).toMatchObject({
        status: 'revoked',
        storedStatus: 'revoked',
        canceledWithdrawals: [pending],
        alreadySending: [claimed],
      });
      await expect(admin('withdraw-address', 'revoke', String(second.id))).rejects.toThrow(CliError);
      await expect(admin('withdraw-address', 'revoke', '999999999')).rejects.toThrow(/no withdrawal address/);
      await open().wallet.tick();
      expect((await owner('/v3/auth/withdraw/details', { id: claimed })).body.txid).toMatch(/^[0-9a-f]{64}$/);
      expect((await owner('/v3/auth/withdraw/details', { id: pending })).body.status).toBe('canceled');
      const listed = await admin('withdraw-address', 'list', account.email);
      expect(listed.map((e: { id: number; status: string }) => [e.id, e.status])).toEqual([
        [second.id, 'revoked'],
        [entry.id, 'deleted'],
      ]);
      await expectReconciled(db());
    });

    it('revoking an entry cancels a withdrawal waiting for its e-mail confirmation; the link then does nothing', async () => {
      const account = await fundedAccount(db(), { withdrawConfirmation: true });
      const owner = await keyOf(db(), account.id, ['read', 'withdraw'], open);
      const bot = await keyOf(db(), account.id, ['withdraw_allowlisted'], open);
      const start = await balanceMap(db(), account.id);
      const entry = (await owner('/v3/auth/withdraw/addresses', { currency: 'btc', address: BTC })).body;
      const [confirmEntry] = linksOf(await mailTo(account.email, `(entry ${entry.id})`));
      await postLink(open, confirmEntry!);
      const waiting = (await bot('/v3/auth/withdraw', btcWithdrawal(BTC))).body[0];
      expect(waiting.status).toBe('awaiting_confirmation');
      const [confirmWithdrawal] = linksOf(await mailTo(account.email, `(request ${waiting.withdrawal_id})`));
      const revoked = await admin('withdraw-address', 'revoke', String(entry.id));
      expect(revoked.canceledWithdrawals).toEqual([waiting.withdrawal_id]);
      expect(await (await postLink(open, confirmWithdrawal!)).json()).toMatchObject({ ok: false });
      await open().wallet.tick();
      expect((await owner('/v3/auth/withdraw/details', { id: waiting.withdrawal_id })).body.status).toBe(
        'canceled',
      );
      expect(await balanceMap(db(), account.id)).toEqual(start);
      expect(await sentTransfers(account.id)).toBe(0);
    });

    it('a delete racing withdrawals: each one is refused or recorded and then cancelled; nothing is sent', async () => {
      const account = await fundedAccount(db());
      const owner = await keyOf(db(), account.id, ['read', 'withdraw'], open);
      const bot = await keyOf(db(), account.id, ['withdraw_allowlisted'], open);
      const start = await balanceMap(db(), account.id);
      const entry = (await owner('/v3/auth/withdraw/addresses', { currency: 'btc', address: BTC })).body;
      // One key per client: requests of one key racing each other would refuse each other's nonces.
      const bots = [bot];
      while (bots.length < 16) bots.push(await keyOf(db(), account.id, ['withdraw_allowlisted'], open));
      // The delete leaves once three withdrawals were answered, so it meets the others in flight.
      let answered = 0;
      let third: () => void = () => {};
      const thirdAnswered = new Promise<void>((resolve) => {
        third = resolve;
      });
      const attempts = bots.map((client, i) =>
        (async () => {
          await sleep(i * 10);
          const answer = await client('/v3/auth/withdraw', btcWithdrawal(BTC));
          if (++answered === 3) third();
          return answer;
        })(),
      );
      const deletion = (async () => {
        await thirdAnswered;
        return owner('/v3/auth/withdraw/addresses/delete', { id: entry.id });
      })();
      const [answers, deleted] = await Promise.all([Promise.all(attempts), deletion]);
      expect(deleted.status).toBe(200);
      const statuses = answers.map((a) => a.status);
      expect(
        statuses.every((s) => s === 200 || s === 403),
        String(statuses),
      ).toBe(true);
      for (const answer of answers.filter((a) => a.status === 403)) {
        expect(answer.body.error.name).toBe('address_not_allowlisted');
      }
      for (const answer of answers.filter((a) => a.status === 200)) {
        const details = await owner('/v3/auth/withdraw/details', { id: answer.body[0].withdrawal_id });
        expect(details.body.status).toBe('canceled');
      }
      await open().wallet.tick();
      expect(await sentTransfers(account.id)).toBe(0);
      expect(await balanceMap(db(), account.id)).toEqual(start);
      await expectReconciled(db());
    });

    it('withdraw_allowlisted is instead of withdraw: never both on one key', async () => {
      const account = await fundedAccount(db());
      await expect(
        admin('key', 'issue', account.email, '--scopes', 'read,withdraw,withdraw_allowlisted'),
      ).rejects.toThrow(/instead of withdraw/);
      const issued = await admin('key', 'issue', account.email, '--scopes', 'read,withdraw_allowlisted');
      expect(issued.scopes).toEqual(['read', 'withdraw_allowlisted']);
      // The table refuses the pair too (a key written around the tool).
      await expect(
        issueApiKey(db(), secretBox, account.id, ['withdraw', 'withdraw_allowlisted']),
      ).rejects.toThrow();
      const bot = httpClient(() => open().url, issued.apiKey, issued.apiSecret);
      expect((await bot('/v3/auth/withdraw/addresses/list')).status).toBe(200);
    });
  });
}
