import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/store.js';
import { issueApiKey } from '../../src/apikeys/store.js';
import { createSmtpMailer } from '../../src/mail/smtp.js';
import { credit } from '../support/accounts.js';
import { client } from '../support/client.js';
import { linksOf, type SmtpSink, startSmtpSink } from '../support/smtp-sink.js';
import { secretBox, usePostgresTarget } from '../support/targets.js';
import { balanceMap, expectReconciled, useWalletApp } from './support.js';

let sink: SmtpSink;
beforeAll(async () => {
  sink = await startSmtpSink();
});
afterAll(async () => {
  await sink.close();
});

const target = usePostgresTarget();
const w = useWalletApp(target, {}, () => ({
  mail: {
    mailer: createSmtpMailer({
      url: sink.url,
      user: undefined,
      password: undefined,
      from: 'exchange@example.com',
      requireTls: false,
      tlsRejectUnauthorized: true,
    }),
    publicUrl: 'https://exchange.example.com',
    linkTtlMs: 3_600_000,
  },
}));
const BTC = 10n ** 10n;
const TO = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';

async function confirmingUser(tag: string) {
  const email = `confirm-${tag}-${Date.now()}@example.com`;
  const account = await w.db().transaction((tx) => createAccount(tx, { email, withdrawConfirmation: true }));
  const { key, secret } = await issueApiKey(w.db(), secretBox, account.id, ['read', 'withdraw']);
  await credit(w.db(), account.id, 'btc', BTC);
  return { account, email, api: client(w.app, key.publicKey, secret) };
}

async function requestAndMail(user: Awaited<ReturnType<typeof confirmingUser>>) {
  const response = await user.api.v3('/v3/auth/withdraw', {
    withdraw_type: 'btc',
    amount: '0.1',
    address: TO,
  });
  expect(response.statusCode).toBe(200);
  const [result] = response.json();
  expect(result).toMatchObject({ status: 'awaiting_confirmation', withdrawal_id: expect.any(Number) });
  const mail = await sink.waitFor((m) => m.subject?.includes(`request ${result.withdrawal_id})`) === true);
  expect(mail.to && 'text' in mail.to ? mail.to.text : '').toContain(user.email);
  const [confirm, cancel] = linksOf(mail).map((url) => new URL(url).pathname);
  expect(confirm).toMatch(/^\/v3\/links\/[A-Za-z0-9_-]{43}$/);
  return { id: result.withdrawal_id as number, confirm: confirm!, cancel: cancel! };
}

const post = (url: string) =>
  w.app().inject({ method: 'POST', url, headers: { accept: 'application/json' } });
const LOCKED = 1_005_000_000n; // 0.1 + 0.0005 fee

describe('withdrawal confirmation by e-mail', () => {
  it('waits for the mailed link: GET only shows, POST confirms once, replays and the twin link are refused', async () => {
    const user = await confirmingUser('ok');
    const { id, confirm, cancel } = await requestAndMail(user);
    expect((await balanceMap(w.db(), user.account.id)).btc).toEqual([BTC - LOCKED, LOCKED]);
    expect((await user.api.v3('/v3/auth/withdraw/details', { id })).json().status).toBe(
      'awaiting_confirmation',
    );
    await w.wallet().tick();
    expect((await user.api.v3('/v3/auth/withdraw/details', { id })).json()).toMatchObject({
      status: 'awaiting_confirmation',
      txid: '',
    });

    const page = await w.app().inject({ method: 'GET', url: confirm });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<form');
    expect((await user.api.v3('/v3/auth/withdraw/details', { id })).json().status).toBe(
      'awaiting_confirmation',
    );

    const forged = await post(`/v3/links/${'A'.repeat(43)}`);
    expect(forged.statusCode).toBe(404);
    expect((await balanceMap(w.db(), user.account.id)).btc).toEqual([BTC - LOCKED, LOCKED]);

    const done = await post(confirm);
    expect(done.statusCode).toBe(200);
    expect(done.json()).toMatchObject({ purpose: 'withdrawal', subject_id: id, action: 'confirm', ok: true });
    expect((await post(confirm)).statusCode).toBe(410);
    expect((await post(cancel)).statusCode).toBe(410);
    await w.wallet().tick();
    const sent = (await user.api.v3('/v3/auth/withdraw/details', { id })).json();
    expect(sent.txid).toMatch(/^[0-9a-f]{64}$/);
    expect((await balanceMap(w.db(), user.account.id)).btc).toEqual([BTC - LOCKED, 0n]);
    await expectReconciled(w.db());
  });

  it('cancels through the cancel link and releases the funds', async () => {
    const user = await confirmingUser('cancel');
    const { id, confirm, cancel } = await requestAndMail(user);
    const done = await post(cancel);
    expect(done.json()).toMatchObject({ action: 'cancel', ok: true });
    expect((await balanceMap(w.db(), user.account.id)).btc).toEqual([BTC, 0n]);
    expect((await post(confirm)).statusCode).toBe(410);
    await w.wallet().tick();
    expect((await user.api.v3('/v3/auth/withdraw/details', { id })).json()).toMatchObject({
      status: 'canceled',
      txid: '',
    });
    expect((await balanceMap(w.db(), user.account.id)).btc).toEqual([BTC, 0n]);
    const history = (await user.api.v3('/v3/auth/assets-history', { statuses: ['canceled'] })).json();
    expect(history.items).toMatchObject([{ id, type: 'withdraw', status: 'canceled' }]);
    await expectReconciled(w.db());
  });

  it('expires an unconfirmed request and releases its funds; its link then changes nothing', async () => {
    const user = await confirmingUser('expire');
    const { id, confirm } = await requestAndMail(user);
    await w
      .db()
      .query(`UPDATE withdrawals SET confirm_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    await w.wallet().tick();
    expect((await user.api.v3('/v3/auth/withdraw/details', { id })).json().status).toBe('canceled');
    expect((await balanceMap(w.db(), user.account.id)).btc).toEqual([BTC, 0n]);
    const late = await post(confirm);
    expect(late.json()).toMatchObject({ ok: false });
    await w.wallet().tick();
    expect((await balanceMap(w.db(), user.account.id)).btc).toEqual([BTC, 0n]);
    const { rows } = await w.db().query('SELECT status FROM withdrawals WHERE id = $1', [id]);
    expect(rows[0]).toEqual({ status: 'expired' });
    await expectReconciled(w.db());
  });
});
