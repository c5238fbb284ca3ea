import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTryInvoice } from '../../src/try-it/invoice.js';
import { SANDBOX_SECRET, testCatalog } from '../support/catalog.js';
import { postForm, type RunningGateway, startGateway } from '../support/gateway.js';
import { signed, signedFormFields } from '../support/invoice-form.js';
import { merchantPost } from '../support/merchant.js';
import { type Receiver, startReceiver } from '../support/receiver.js';
import type { Target } from '../support/targets.js';

const UAH_KEY = 'pk_test_exchange_uah';
const RETURN_URL = 'http://merchant.test/return';

/** The gateway's HTTP contract (gateway-contract.md), over a real listener, on PostgreSQL and on PGlite. */
export function httpContract(target: Target): void {
  describe(`paygate HTTP API (${target.name})`, () => {
    let gateway: RunningGateway;
    let receiver: Receiver;
    let offsetMs = 0;
    /** Set by a test that steps the clock by less than a second or two: real time then stands still. */
    let frozenAt: number | undefined;
    const now = () => (frozenAt ?? Date.now()) + offsetMs;

    beforeAll(async () => {
      receiver = await startReceiver(SANDBOX_SECRET);
      gateway = await startGateway({
        db: target.db(),
        // The try-it merchant's URLs are paths on the gateway itself.
        catalog: testCatalog({ callbackUrl: receiver.url, returnUrl: RETURN_URL }, () => gateway.url),
        now,
        startWorker: false,
        payoutSettleMs: 2_000,
        invoiceTtlSeconds: 60,
      });
    });
    afterAll(async () => {
      await gateway?.close();
      await receiver?.close();
    });

    const postJson = async (path: string, body: unknown) => {
      const response = await fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      // biome-ignore lint/suspicious/noExplicitAny: the tests read nested JSON ad hoc and assert its shape
      return { status: response.status, json: (await response.json()) as Record<string, any> };
    };
    const newInvoice = async (amount: number | string = 500, extra: Record<string, unknown> = {}) => {
      const reference = `dep-${randomUUID()}`;
      const { status, json } = await postJson('/public-api/payment-invoices', {
        ...signed({
          public_key: UAH_KEY,
          reference_id: reference,
          description: 'Deposit',
          service: 'payment_card_uah_hpp',
          currency: 'uah',
          amount,
        }),
        ...extra,
      });
      expect(status).toBe(201);
      const payload = Object.fromEntries(
        (json.data.active_payment.payload as { name: string; value: string }[]).map((p) => [p.name, p.value]),
      );
      return { reference, data: json.data, payload: payload as { invoice_id: string; token: string } };
    };
    const invoiceStatus = async (reference: string) =>
      (
        await merchantPost(
          gateway.url,
          '/merchant-api/invoices/status',
          { reference_id: reference },
          SANDBOX_SECRET,
        )
      ).json.data as Record<string, unknown>;
    const pay = (
      payload: { invoice_id: string; token: string },
      card: string,
      expiry = '12/30',
      cvc = '123',
    ) =>
      postForm(`${gateway.url}/public-api/payment-invoices/pay`, {
        ...payload,
        card_number: card,
        expiry,
        cvc,
      });

    it('answers health and documents every route in OpenAPI', async () => {
      expect(await (await fetch(`${gateway.url}/health`)).json()).toEqual({
        status: 'ok',
        storage: target.name,
      });
      const spec = (await (await fetch(`${gateway.url}/docs/json`)).json()) as {
        paths: Record<string, unknown>;
      };
      for (const path of [
        '/public-api/payment-prerequest',
        '/public-api/payout-prerequest',
        '/public-api/payment-invoices',
        '/public-api/payment-invoices/process',
        '/public-api/payment-invoices/pay',
        '/merchant-api/payouts',
        '/merchant-api/payouts/status',
        '/merchant-api/invoices/status',
      ]) {
        expect(spec.paths).toHaveProperty([path]);
      }
    });

    describe('prerequests', () => {
      it('lists the deposit services of a public key, shaped as the spec', async () => {
        const { status, json } = await postJson('/public-api/payment-prerequest', {
          currency: 'UAH',
          public_key: UAH_KEY,
        });
        expect(status).toBe(200);
        expect(Object.keys(json.data)).toEqual(['currency', 'test_mode', 'services', 'methods', 'account']);
        expect(json.data.test_mode).toBe(true);
        expect(json.data.services.payment_card_uah_hpp).toEqual({
          code: 'payment_card_uah_hpp',
          method: 'payment_card',
          flow: 'hpp',
          currency: 'UAH',
          fields: [],
          amount_min: 10,
          amount_max: 50000,
          fee: { rate: 1.5, fixed: 0, min: 0, max: 0 },
        });
        expect(Object.keys(json.data.methods.payment_card)).toEqual([
          'code',
          'category',
          'description',
          'name',
          'logo',
          'icon',
          'metadata',
          'position',
          'hide',
        ]);
        expect(json.data.account).toMatchObject({ name: 'Exchange' });
        const logo = await fetch(json.data.methods.payment_card.logo);
        expect(logo.headers.get('content-type')).toBe('image/svg+xml');
      });

      it('lists payout services with the amount, as the reference example', async () => {
        const { status, json } = await postJson('/public-api/payout-prerequest', {
          amount: 1000,
          currency: 'UAH',
          public_key: UAH_KEY,
        });
        expect(status).toBe(200);
        expect(json.data.amount).toBe(1000);
        const card = json.data.services.payment_card_uah;
        expect(Object.keys(card)).toEqual([
          'code',
          'method',
          'currency',
          'fields',
          'amount_min',
          'amount_max',
          'exchange_rate',
          'amount',
          'fee',
        ]);
        expect(card).toMatchObject({
          exchange_rate: 1,
          amount: '1000.00',
          amount_min: 10,
          amount_max: 250000,
        });
        expect(card.fields).toEqual([
          {
            key: 'card_number',
            type: 'string',
            label: { en: 'Card number', uk: 'Номер картки', ru: 'Номер карты' },
            example: '4242424242424242',
            hint: expect.objectContaining({ en: expect.any(String) }),
            regexp: '^\\d{12,19}$',
            required: true,
            position: 0,
          },
        ]);
      });

      it("refuses an unknown key, a currency that is not the key's, and a malformed body", async () => {
        const unknown = await postJson('/public-api/payment-prerequest', {
          currency: 'UAH',
          public_key: 'pk_nope',
        });
        expect(unknown.status).toBe(404);
        expect(unknown.json.error).toMatchObject({ name: 'unknown_public_key', field: 'public_key' });
        const mismatch = await postJson('/public-api/payment-prerequest', {
          currency: 'USD',
          public_key: UAH_KEY,
        });
        expect(mismatch.status).toBe(400);
        expect(mismatch.json.error).toMatchObject({ name: 'currency_mismatch', field: 'currency' });
        const malformed = await postJson('/public-api/payout-prerequest', {
          currency: 'UAH',
          public_key: UAH_KEY,
        });
        expect(malformed.status).toBe(400);
        expect(malformed.json.error.name).toBe('validation_failed');
      });
    });

    describe('invoices', () => {
      it('creates an invoice with fee and total and the form payload of the hosted page', async () => {
        const { data, payload } = await newInvoice(500);
        expect(data).toMatchObject({
          status: 'created',
          currency: 'UAH',
          amount: '500.00',
          fee: '7.50',
          total: '507.50',
          service: 'payment_card_uah_hpp',
          test_mode: true,
        });
        expect(data.active_payment).toMatchObject({
          flow: 'hpp',
          method: 'POST',
          action: `${gateway.url}/public-api/payment-invoices/process`,
        });
        expect(payload.invoice_id).toBe(data.id);
        expect(payload.token).toMatch(/^[0-9a-f]{64}$/);
      });

      it('answers the same invoice for the same reference, 409 for a different one', async () => {
        const first = await newInvoice('250.5');
        const again = await postJson(
          '/public-api/payment-invoices',
          signed({
            public_key: UAH_KEY,
            reference_id: first.reference,
            description: 'Deposit',
            service: 'payment_card_uah_hpp',
            currency: 'UAH',
            amount: 250.5,
          }),
        );
        expect(again.status).toBe(200);
        expect(again.json.data.id).toBe(first.data.id);
        expect(again.json.data.active_payment.payload).toEqual(first.data.active_payment.payload);
        const other = await postJson(
          '/public-api/payment-invoices',
          signed({
            public_key: UAH_KEY,
            reference_id: first.reference,
            service: 'payment_card_uah_hpp',
            currency: 'UAH',
            amount: 251,
          }),
        );
        expect(other.status).toBe(409);
        expect(other.json.error).toMatchObject({ name: 'reference_conflict', field: 'reference_id' });
      });

      it('validates service, amount and limits, naming the field', async () => {
        const base = { public_key: UAH_KEY, reference_id: `r-${randomUUID()}`, currency: 'UAH' };
        const service = await postJson('/public-api/payment-invoices', {
          ...base,
          service: 'nope',
          amount: 100,
        });
        expect([service.status, service.json.error.field]).toEqual([404, 'service']);
        const low = await postJson('/public-api/payment-invoices', {
          ...base,
          service: 'payment_card_uah_hpp',
          amount: 5,
        });
        expect(low.status).toBe(422);
        expect(low.json.error).toMatchObject({
          name: 'amount_out_of_limits',
          field: 'amount',
          message: 'amount must be at least 10.00 UAH',
        });
        const high = await postJson('/public-api/payment-invoices', {
          ...base,
          service: 'payment_card_uah_hpp',
          amount: '50000.01',
        });
        expect([high.status, high.json.error.field]).toEqual([422, 'amount']);
        const decimals = await postJson('/public-api/payment-invoices', {
          ...base,
          service: 'payment_card_uah_hpp',
          amount: '10.001',
        });
        expect([decimals.status, decimals.json.error.name]).toEqual([400, 'invalid_amount']);
      });
    });

    describe('hosted payment page without JavaScript', () => {
      it('shows merchant, amount, fee and total with labelled card fields', async () => {
        const { payload } = await newInvoice(500);
        const page = await postForm(`${gateway.url}/public-api/payment-invoices/process`, payload);
        expect(page.status).toBe(200);
        // Amounts in the payer's language (English without Accept-Language), with a no-break space.
        for (const text of ['Exchange', 'UAH 500.00', 'UAH 7.50', 'UAH 507.50', 'Pay UAH 507.50']) {
          expect(page.text.replace(/\u00a0/g, ' ')).toContain(text);
        }
        for (const id of ['card_number', 'expiry', 'cvc']) {
          expect(page.text).toContain(`<label for="${id}">`);
          expect(page.text).toContain(`id="${id}" name="${id}"`);
        }
        expect(page.text).not.toMatch(/<(link|img|script)[^>]+(src|href)=/);
      });

      it('refuses a forged token and an unknown invoice', async () => {
        const { reference, payload } = await newInvoice(100);
        const forged = await postForm(`${gateway.url}/public-api/payment-invoices/process`, {
          invoice_id: payload.invoice_id,
          token: 'f'.repeat(64),
        });
        expect(forged.status).toBe(403);
        expect(forged.text).toContain('This payment link is not valid');
        const forgedPay = await pay(
          { invoice_id: payload.invoice_id, token: '0'.repeat(64) },
          '4242424242424242',
        );
        expect(forgedPay.status).toBe(403);
        expect((await invoiceStatus(reference)).status).toBe('created');
        const unknown = await postForm(`${gateway.url}/public-api/payment-invoices/process`, {
          invoice_id: 'inv_nope',
          token: payload.token,
        });
        expect(unknown.status).toBe(404);
      });

      it('explains a card number failing Luhn and an expired card, and charges nothing', async () => {
        const { reference, payload } = await newInvoice(100);
        const wrong = await pay(payload, '4242 4242 4242 4241', '01/20', '12');
        expect(wrong.status).toBe(422);
        expect(wrong.text).toContain('This card number is not valid. Check it for typos.');
        expect(wrong.text).toContain('This card has expired.');
        expect(wrong.text).toContain('The security code is the 3 digits on the back of the card.');
        expect(wrong.text).toContain('aria-invalid="true"');
        expect(wrong.text).not.toContain('4242 4242 4242 4241');
        expect((await invoiceStatus(reference)).status).toBe('created');
      });

      it('pays with the success card once, stores only the masked number, and returns to the merchant', async () => {
        const { reference, payload } = await newInvoice(500);
        const paid = await pay(payload, '4242 4242 4242 4242');
        expect(paid.status).toBe(303);
        const result = await fetch(`${gateway.url}${paid.location}`);
        const text = await result.text();
        expect(text).toContain('Payment successful');
        expect(text).toContain('424242******4242');
        const invoice = await invoiceStatus(reference);
        expect(invoice).toMatchObject({ status: 'success', card_masked: '424242******4242' });

        // Replaying the form (or a second tab) cannot pay it again.
        const replay = await pay(payload, '4000000000000002');
        expect(replay.status).toBe(303);
        expect(await invoiceStatus(reference)).toMatchObject({
          status: 'success',
          card_masked: '424242******4242',
        });

        const rows = await target
          .db()
          .query<{ row: string }>('SELECT row_to_json(i)::text AS row FROM invoices i');
        for (const { row } of rows.rows) expect(row).not.toContain('4242424242424242');

        const back = await fetch(
          `${gateway.url}/public-api/payment-invoices/return?invoice_id=${payload.invoice_id}&token=${payload.token}`,
          { redirect: 'manual' },
        );
        expect(back.status).toBe(303);
        const location = new URL(back.headers.get('location') ?? '');
        expect(`${location.origin}${location.pathname}`).toBe(RETURN_URL);
        expect(Object.fromEntries(location.searchParams)).toEqual({
          reference_id: reference,
          invoice_id: payload.invoice_id,
          status: 'success',
        });
      });

      it('asks the 3-D Secure card for a code: 123456 succeeds, another code fails', async () => {
        const good = await newInvoice(300);
        const step = await pay(good.payload, '4000 0000 0000 3220');
        expect(step.status).toBe(303);
        const challenge = await (await fetch(`${gateway.url}${step.location}`)).text();
        expect(challenge).toContain('Confirm your payment');
        expect(challenge).toContain('<label for="code">');
        expect((await invoiceStatus(good.reference)).status).toBe('processing');
        const confirmed = await postForm(`${gateway.url}/public-api/payment-invoices/confirm`, {
          ...good.payload,
          code: '123456',
        });
        expect(confirmed.status).toBe(303);
        expect((await invoiceStatus(good.reference)).status).toBe('success');

        const bad = await newInvoice(300);
        await pay(bad.payload, '4000000000003220');
        await postForm(`${gateway.url}/public-api/payment-invoices/confirm`, {
          ...bad.payload,
          code: '000000',
        });
        // A wrong code ends that card's attempt: the invoice is open for another card (no failure yet).
        expect(await invoiceStatus(bad.reference)).toMatchObject({ status: 'created', failure_reason: null });
        const again = await (
          await fetch(`${gateway.url}/public-api/payment-invoices/page?${new URLSearchParams(bad.payload)}`)
        ).text();
        expect(again).toContain('The confirmation code was wrong.');
        expect(again).toContain('2 attempts left');
      });

      it('keeps the invoice open after a declined card, and fails it with the last reason once the attempts are used', async () => {
        const declined = await newInvoice(200);
        const answer = await pay(declined.payload, '4000000000000002');
        const page = await (await fetch(`${gateway.url}${answer.location}`)).text();
        expect(page).toContain('Your card was declined');
        expect(await invoiceStatus(declined.reference)).toMatchObject({ status: 'created' });
        const poor = await newInvoice(200);
        // CARD_ATTEMPTS_MAX (3 by default): two declines leave it open, the third card ends it.
        await pay(poor.payload, '4000000000000002');
        await pay(poor.payload, '4000000000000002');
        expect(await invoiceStatus(poor.reference)).toMatchObject({ status: 'created' });
        await pay(poor.payload, '4000000000009995');
        expect(await invoiceStatus(poor.reference)).toMatchObject({
          status: 'failed',
          failure_reason: 'insufficient_funds',
        });
        const back = await fetch(
          `${gateway.url}/public-api/payment-invoices/return?invoice_id=${poor.payload.invoice_id}&token=${poor.payload.token}`,
          { redirect: 'manual' },
        );
        expect(new URL(back.headers.get('location') ?? '').searchParams.get('status')).toBe('failed');
      });

      it('opens the page from the simplified deposit form, creating the invoice once', async () => {
        const reference = `simple-${randomUUID()}`;
        const form = signedFormFields({
          amount: '500',
          reference_id: reference,
          currency: 'uah',
          service: 'default',
          public_key: UAH_KEY,
        });
        const first = await postForm(`${gateway.url}/public-api/payment-invoices/process`, form);
        expect(first.status).toBe(200);
        expect(first.text.replace(/\u00a0/g, ' ')).toContain('UAH 507.50');
        const again = await postForm(`${gateway.url}/public-api/payment-invoices/process`, form);
        expect(again.status).toBe(200);
        expect(await invoiceStatus(reference)).toMatchObject({
          amount: '500.00',
          service: 'payment_card_uah_hpp',
        });
      });
    });

    describe('other ways an invoice ends', () => {
      it('pays an e-wallet service on its sandbox page', async () => {
        const created = await postJson(
          '/public-api/payment-invoices',
          signed({
            public_key: 'pk_test_exchange_usd',
            reference_id: `wallet-${randomUUID()}`,
            service: 'advcash_wallet_usd_hpp',
            currency: 'USD',
            amount: '20',
          }),
        );
        expect(created.status).toBe(201);
        expect(created.json.data).toMatchObject({ amount: '20.00', fee: '0.50', total: '20.50' });
        const payload = Object.fromEntries(
          (created.json.data.active_payment.payload as { name: string; value: string }[]).map((p) => [
            p.name,
            p.value,
          ]),
        );
        const page = await postForm(`${gateway.url}/public-api/payment-invoices/process`, payload);
        expect(page.text).toContain('Approve $20.50');
        expect(page.text).not.toContain('card_number');
        const card = await pay(payload as { invoice_id: string; token: string }, '4242424242424242');
        expect(card.status).toBe(303); // a card cannot pay a wallet invoice: back to the page, unchanged
        await postForm(`${gateway.url}/public-api/payment-invoices/wallet`, {
          ...payload,
          decision: 'approve',
        });
        expect((await invoiceStatus(created.json.data.reference_id)).status).toBe('success');
      });

      it("cancels on the payer's request, and expires an invoice nobody paid", async () => {
        const canceled = await newInvoice(100);
        await postForm(`${gateway.url}/public-api/payment-invoices/cancel`, canceled.payload);
        expect(await invoiceStatus(canceled.reference)).toMatchObject({
          status: 'failed',
          failure_reason: 'canceled_by_payer',
        });

        const idle = await newInvoice(100);
        // The answer says when (issue 33 "Expiry everywhere"): created_at + INVOICE_TTL_SECONDS (60 here).
        expect(Date.parse(idle.data.expires_at) - Date.parse(idle.data.created_at)).toBe(60_000);
        offsetMs += 61_000;
        await gateway.worker.runOnce();
        expect((await invoiceStatus(idle.reference)).status).toBe('expired');
        // ...and the merchant is told by a callback of its own.
        for (let i = 0; i < 3; i++) await gateway.worker.runOnce();
        const told = receiver.received.filter((r) => r.body.reference_id === idle.reference);
        expect(told.map((r) => [r.body.status, r.body.sequence])).toEqual([
          ['created', 1],
          ['expired', 2],
        ]);
        const late = await pay(idle.payload, '4242424242424242');
        const page = await (await fetch(`${gateway.url}${late.location}`)).text();
        expect(page).toContain('Payment expired');
        expect((await invoiceStatus(idle.reference)).status).toBe('expired');
      });
    });

    describe('merchant API', () => {
      const payout = (reference: string, card: string, amount: string | number = '100.00') =>
        merchantPost(
          gateway.url,
          '/merchant-api/payouts',
          {
            reference_id: reference,
            service: 'payment_card_uah',
            currency: 'UAH',
            amount,
            fields: { card_number: card },
          },
          SANDBOX_SECRET,
        );

      it('sends a payout, answers a repeat with the same payout, and settles it', async () => {
        const reference = `wd-${randomUUID()}`;
        const created = await payout(reference, '4242 4242 4242 4242');
        expect(created.status).toBe(201);
        expect(created.json.data).toMatchObject({
          reference_id: reference,
          status: 'processing',
          amount: '100.00',
          fee: '1.50',
          destination_masked: '424242******4242',
          failure_reason: null,
        });
        expect(JSON.stringify(created.json)).not.toContain('4242424242424242');
        const repeat = await payout(reference, '4242424242424242');
        expect(repeat.status).toBe(200);
        expect((repeat.json.data as { id: string }).id).toBe((created.json.data as { id: string }).id);

        offsetMs += 2_500;
        await gateway.worker.runOnce();
        const status = await merchantPost(
          gateway.url,
          '/merchant-api/payouts/status',
          { reference_id: reference },
          SANDBOX_SECRET,
        );
        expect(status.json.data).toMatchObject({ status: 'success' });
      });

      it('fails a payout the processor rejects after accepting it', async () => {
        const reference = `wd-${randomUUID()}`;
        expect((await payout(reference, '4000000000000119')).status).toBe(201);
        offsetMs += 2_500;
        await gateway.worker.runOnce();
        const status = await merchantPost(
          gateway.url,
          '/merchant-api/payouts/status',
          { reference_id: reference },
          SANDBOX_SECRET,
        );
        expect(status.json.data).toMatchObject({ status: 'failed', failure_reason: 'processor_error' });
      });

      it('refuses an invalid card number and an amount outside the limits before anything is sent', async () => {
        const luhn = await payout(`wd-${randomUUID()}`, '4242424242424241');
        expect(luhn.status).toBe(400);
        expect(luhn.json.error).toMatchObject({ name: 'invalid_field', field: 'card_number' });
        const low = await payout(`wd-${randomUUID()}`, '4242424242424242', '9.99');
        expect(low.status).toBe(422);
        expect(low.json.error).toMatchObject({ name: 'amount_out_of_limits', field: 'amount' });
        const reference = `wd-${randomUUID()}`;
        await payout(reference, '4242');
        const missing = await merchantPost(
          gateway.url,
          '/merchant-api/payouts/status',
          { reference_id: reference },
          SANDBOX_SECRET,
        );
        expect(missing.status).toBe(404);
      });

      it('refuses a bad signature, a stale timestamp and an unknown merchant', async () => {
        const body = { reference_id: 'x' };
        const wrongSecret = await merchantPost(
          gateway.url,
          '/merchant-api/payouts/status',
          body,
          'not-the-secret',
        );
        expect([wrongSecret.status, (wrongSecret.json.error as { name: string }).name]).toEqual([
          401,
          'bad_signature',
        ]);
        const stale = await merchantPost(gateway.url, '/merchant-api/payouts/status', body, SANDBOX_SECRET, {
          timestamp: Math.floor(now() / 1000) - 301,
        });
        expect([stale.status, (stale.json.error as { name: string }).name]).toEqual([401, 'stale_timestamp']);
        const stranger = await merchantPost(
          gateway.url,
          '/merchant-api/payouts/status',
          body,
          SANDBOX_SECRET,
          {
            merchant: 'mallory',
          },
        );
        expect(stranger.status).toBe(401);
        const unsigned = await postJson('/merchant-api/payouts', {});
        expect(unsigned.status).toBe(401);
      });
    });

    describe('callbacks', () => {
      it('delivers every change, signed, in order per object', async () => {
        const { reference, payload } = await newInvoice(500);
        await pay(payload, '4000000000003220');
        await postForm(`${gateway.url}/public-api/payment-invoices/confirm`, { ...payload, code: '123456' });
        for (let i = 0; i < 5; i++) await gateway.worker.runOnce();
        const mine = receiver.received.filter((r) => r.body.reference_id === reference);
        expect(mine.map((r) => r.body.status)).toEqual(['created', 'processing', 'success']);
        for (const callback of mine) {
          expect(callback.signatureValid).toBe(true);
          expect(callback.headers['x-paygate-merchant']).toBe('exchange');
        }
        expect(mine[2]?.body).toEqual({
          event_id: `${payload.invoice_id}:success`,
          object: 'invoice',
          id: payload.invoice_id,
          reference_id: reference,
          status: 'success',
          currency: 'UAH',
          amount: '500.00',
          fee: '7.50',
          service: 'payment_card_uah_hpp',
          test_mode: true,
          occurred_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          failure_reason: null,
          sequence: 3,
        });
      });

      it('retries an unacknowledged callback with a doubling delay until a 2xx', async () => {
        const { reference } = await newInvoice(100);
        let refusals = 0;
        receiver.respond = (_n, body) => (body.reference_id === reference && refusals++ < 2 ? 500 : 200);
        // "Not due yet" holds only if under a second of real time passes between two runs: frozen.
        frozenAt = Date.now();
        try {
          await gateway.worker.runOnce(); // attempt 1: 500
          await gateway.worker.runOnce(); // not due yet (1 s)
          expect(receiver.received.filter((r) => r.body.reference_id === reference)).toHaveLength(1);
          offsetMs += 1_100;
          await gateway.worker.runOnce(); // attempt 2: 500, next in 2 s
          offsetMs += 1_100;
          await gateway.worker.runOnce(); // not due yet
          expect(receiver.received.filter((r) => r.body.reference_id === reference)).toHaveLength(2);
          offsetMs += 1_100;
          await gateway.worker.runOnce(); // attempt 3: 200
          const mine = receiver.received.filter((r) => r.body.reference_id === reference);
          expect(mine.map((r) => r.answered)).toEqual([500, 500, 200]);
          const { rows } = await target
            .db()
            .query<{ attempts: number; delivered: boolean; last_error: string }>(
              `SELECT attempts, delivered_at IS NOT NULL AS delivered, last_error FROM callback_outbox
               WHERE body LIKE $1`,
              [`%${reference}%`],
            );
          expect(rows).toEqual([{ attempts: 3, delivered: true, last_error: 'HTTP 500' }]);
        } finally {
          frozenAt = undefined;
          receiver.respond = () => 200;
        }
      });
    });
    describe("the try-it merchant (the README's Try-it lines, issue 31)", () => {
      /** The outbox rows of one object: delivered, and in how many attempts. */
      const callbacksOf = async (objectId: string) =>
        (
          await target.db().query<{ attempts: number; delivered: boolean; status: string }>(
            `SELECT attempts, delivered_at IS NOT NULL AS delivered, body::jsonb ->> 'status' AS status
                 FROM callback_outbox WHERE object_id = $1 ORDER BY id`,
            [objectId],
          )
        ).rows;

      it('try-invoice makes an invoice of its own; paid, its callbacks are acknowledged by the gateway at once', async () => {
        const before = receiver.received.length;
        const invoice = await createTryInvoice({
          gatewayUrl: gateway.url,
          secret: 'sandbox-try-it-secret',
          amount: '500',
          currency: 'UAH',
          locale: 'uk',
          now: now(),
        });
        const pageUrl = new URL(invoice.pageUrl);
        const page = await (await fetch(pageUrl)).text();
        expect(page).toContain('Try-it shop');
        expect(page).toContain('<html lang="uk">');
        const payload = {
          invoice_id: pageUrl.searchParams.get('invoice_id') ?? '',
          token: pageUrl.searchParams.get('token') ?? '',
        };
        expect((await pay(payload, '4242424242424242')).status).toBe(303);
        await gateway.worker.runOnce();
        await gateway.worker.runOnce();
        expect((await callbacksOf(invoice.id)).map((c) => [c.status, c.delivered, c.attempts])).toEqual([
          ['created', true, 1],
          ['success', true, 1],
        ]);
        // Nothing reached the exchange merchant's receiver.
        expect(receiver.received.slice(before).filter((r) => r.body.id === invoice.id)).toEqual([]);
        // The payer returns to the gateway's own page, which promises no credit.
        const back = await fetch(
          `${gateway.url}/public-api/payment-invoices/return?${new URLSearchParams(payload)}`,
          { redirect: 'manual' },
        );
        const location = back.headers.get('location') ?? '';
        expect(location.startsWith(`${gateway.url}/try-it/return?`)).toBe(true);
        const returned = await fetch(location);
        expect(returned.status).toBe(200);
        expect(await returned.text()).toContain('nothing is credited anywhere');
      });

      it("the README's payout as the try-it merchant: its callback is acknowledged at once", async () => {
        const answer = await merchantPost(
          gateway.url,
          '/merchant-api/payouts',
          {
            reference_id: `try-payout-${randomUUID()}`,
            service: 'payment_card_uah',
            currency: 'UAH',
            amount: '100.00',
            fields: { card_number: '4242424242424242' },
          },
          'sandbox-try-it-secret',
          { merchant: 'try_it', timestamp: Math.floor(now() / 1000) },
        );
        expect(answer.status).toBe(201);
        const payout = (answer.json.data as { id: string }).id;
        await gateway.worker.runOnce();
        expect((await callbacksOf(payout)).map((c) => [c.status, c.delivered, c.attempts])).toEqual([
          ['processing', true, 1],
        ]);
      });
    });
  });
}
