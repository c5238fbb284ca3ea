import { startTcpFront } from '@platform/testkit/front';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateAccount } from '../../src/accounts/store.js';
import { buildApp } from '../../src/app.js';
import { expireUnconfirmed } from '../../src/codes/confirmation.js';
import { DEFAULT_FAILURE_LIMITS } from '../../src/codes/limits.js';
import { TransferCodes } from '../../src/codes/service.js';
import type { App } from '../../src/http/typed.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { ActionLinks } from '../../src/mail/links.js';
import { createSmtpMailer } from '../../src/mail/smtp.js';
import { linksOf, type SmtpSink, startSmtpSink } from '../support/smtp-sink.js';
import { reference, secretBox, type Target } from '../support/targets.js';
import { available, codeClient, escrow, fundedUser, snapshot, units } from './support.js';

const HOUR = 3_600_000;

const smtp = (url: string) =>
  createSmtpMailer({
    url,
    user: undefined,
    password: undefined,
    requireTls: false,
    tlsRejectUnauthorized: true,
    from: 'Exchange <no-reply@exchange.test>',
  });

/** With withdraw_confirmation on, a new code waits for the owner's e-mailed confirm or cancel link. */
export function confirmationContract(target: Target): void {
  describe(`transfer codes: e-mail confirmation (${target.name})`, () => {
    let sink: SmtpSink;
    let app: App;
    let offset = 0;
    const now = () => Date.now() + offset;

    beforeAll(async () => {
      sink = await startSmtpSink();
      app = await buildApp({
        db: target.db(),
        reference,
        secretBox,
        now,
        nonceWindowMs: 86_400_000,
        mail: { mailer: smtp(sink.url), publicUrl: 'http://exchange.test', linkTtlMs: HOUR },
      });
    });
    afterAll(async () => {
      await app?.close();
      await sink?.close();
    });

    const confirming = async () => {
      const owner = await fundedUser(target, () => app);
      const account = await updateAccount(target.db(), owner.id, { withdrawConfirmation: true });
      return { ...owner, email: account!.email };
    };
    const mailTo = (email: string, count: number) =>
      (async () => {
        await sink.waitFor(
          () => sink.messages.filter((m) => m.to && JSON.stringify(m.to).includes(email)).length >= count,
        );
        return sink.messages.filter((m) => JSON.stringify(m.to).includes(email))[count - 1]!;
      })();
    const post = (url: string) =>
      app.inject({ method: 'POST', url: new URL(url).pathname, headers: { accept: 'application/json' } });

    it('creates the code unconfirmed with the amount in escrow; the confirm link activates it', async () => {
      const owner = await confirming();
      const taker = await fundedUser(target, () => app);
      const escrowBefore = await escrow(target, 'btc');
      const response = await owner.client.create({ amount: 0.02, currency: 'btc' });
      expect(response.statusCode, response.body).toBe(200);
      const code = response.json<{ id: number; code: string; sn: string; status: string }>();
      expect(code.status).toBe('unconfirmed');
      expect(await escrow(target, 'btc')).toBe(escrowBefore + units('btc', '0.02'));

      const mail = await mailTo(owner.email, 1);
      expect(mail.subject).toBe('Confirm your transfer code for 0.02 BTC');
      expect(mail.text).toContain(code.sn);
      for (const segment of code.code.split('-').slice(1, 9)) expect(mail.text).not.toContain(segment);
      const [confirmUrl, cancelUrl] = linksOf(mail);
      expect(confirmUrl).toMatch(/^http:\/\/exchange\.test\/v3\/links\//);

      const before = await snapshot(target, [owner.id, taker.id]);
      const early = await taker.client.redeem(code.code);
      expect(early.statusCode).toBe(409);
      expect(early.json().error.name).toBe('svc_code_unconfirmed');
      expect(await snapshot(target, [owner.id, taker.id])).toBe(before);

      // Showing the page (what a mail scanner does) changes nothing.
      const page = await app.inject({ method: 'GET', url: new URL(confirmUrl!).pathname });
      expect(page.statusCode).toBe(200);
      expect((await owner.client.details(code.id)).json().status).toBe('unconfirmed');

      const confirmed = await post(confirmUrl!);
      expect(confirmed.statusCode, confirmed.body).toBe(200);
      expect(confirmed.json()).toMatchObject({ purpose: 'svc_code', subject_id: code.id, ok: true });
      expect((await owner.client.details(code.id)).json().status).toBe('active');
      expect((await post(confirmUrl!)).statusCode).toBe(410);
      expect((await post(cancelUrl!)).statusCode).toBe(410);
      expect((await taker.client.redeem(code.code)).statusCode).toBe(200);
    });

    it('the cancel link cancels the code and gives the amount back', async () => {
      const owner = await confirming();
      const start = await available(target, owner.id, 'btc');
      const code = (await owner.client.create({ amount: 0.03, currency: 'btc' })).json<{ id: number }>();
      expect(await available(target, owner.id, 'btc')).toBe(start - units('btc', '0.03'));
      const [confirmUrl, cancelUrl] = linksOf(await mailTo(owner.email, 1));
      const cancelled = await post(cancelUrl!);
      expect(cancelled.json()).toMatchObject({ ok: true, action: 'cancel' });
      expect((await owner.client.details(code.id)).json().status).toBe('canceled');
      expect(await available(target, owner.id, 'btc')).toBe(start);
      expect((await post(confirmUrl!)).statusCode).toBe(410);
    });

    it('a code on hold is not settled by its owner link; unconfirmed codes expire with their links', async () => {
      const owner = await confirming();
      const start = await available(target, owner.id, 'btc');
      const held = (await owner.client.create({ amount: 0.01, currency: 'btc' })).json<{ id: number }>();
      const [, cancelUrl] = linksOf(await mailTo(owner.email, 1));
      const codes = new TransferCodes({ db: target.db(), secretBox, limits: DEFAULT_FAILURE_LIMITS, now });
      expect((await codes.act(held.id, 'hold')).ok).toBe(true);
      const refused = await post(cancelUrl!);
      expect(refused.json()).toMatchObject({ ok: false });
      expect((await owner.client.details(held.id)).json().status).toBe('onhold');

      const left = (await owner.client.create({ amount: 0.04, currency: 'btc' })).json<{ id: number }>();
      await mailTo(owner.email, 2);
      const links = new ActionLinks({
        db: target.db(),
        key: secretBox.deriveKey('action-links'),
        publicUrl: 'http://exchange.test',
        ttlMs: HOUR,
        now,
      });
      const deps = { db: target.db(), links, mailer: smtp(sink.url), reference, now };
      expect(await expireUnconfirmed(codes, deps)).toBe(0);
      offset += HOUR + 1_000;
      expect(await expireUnconfirmed(codes, deps)).toBeGreaterThanOrEqual(1);
      expect((await owner.client.details(left.id)).json().status).toBe('canceled');
      // Still on hold (not unconfirmed): only an operator settles it.
      expect((await owner.client.details(held.id)).json().status).toBe('onhold');
      expect(await available(target, owner.id, 'btc')).toBe(start - units('btc', '0.01'));
      expect((await reconcile(target.db())).problems).toEqual([]);
    });

    it('cancels the code and answers 503 when the confirmation mail cannot be sent', async () => {
      // A mail server that is down: a front with no server behind it resets the SMTP connection, and
      // no other process can answer at its port (unlike one released by freePort()).
      const down = await startTcpFront();
      const port = down.port;
      const broken = await buildApp({
        db: target.db(),
        reference,
        secretBox,
        mail: {
          mailer: smtp(`smtp://127.0.0.1:${port}`),
          publicUrl: 'http://exchange.test',
          linkTtlMs: HOUR,
        },
      });
      try {
        const owner = await confirming();
        const client = codeClient(() => broken, owner.apiKey, owner.secret);
        const start = await available(target, owner.id, 'btc');
        const response = await client.create({ amount: 0.01, currency: 'btc' });
        expect(response.statusCode).toBe(503);
        expect(response.json().error.name).toBe('unavailable');
        expect(await available(target, owner.id, 'btc')).toBe(start);
        const { rows } = await target
          .db()
          .query<{ status: string }>('SELECT status FROM svc_codes WHERE owner_id = $1', [owner.id]);
        expect(rows.map((r) => r.status)).toEqual(['canceled']);
      } finally {
        await broken.close();
        await down.close();
      }
    });
  });
}
