import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_SECRET, testCatalog } from '../support/catalog.js';
import { postForm, type RunningGateway, startGateway } from '../support/gateway.js';
import { formSignature, signed, signedFormFields } from '../support/invoice-form.js';
import { merchantPost } from '../support/merchant.js';
import { usePostgresTarget } from '../support/targets.js';

/**
 * Issue 28 item 2 and issue 41: a third party who knows the merchant's public key (the exchange shows
 * it in every account object) and a reference id (a guess, or the payer's deposit id seen somewhere)
 * must not get the hosted page's token of the payer's invoice, nor cancel or open it. The spec's
 * unsigned body creates an invoice for a new reference only (README "Unsigned invoices"): its token
 * is answered once, to that create. These are the third party's exact requests.
 */
describe('the payer page token is only for the merchant and its payer', () => {
  const target = usePostgresTarget();
  let gateway: RunningGateway;
  const UAH_KEY = 'pk_test_exchange_uah';
  let run = 0;
  beforeAll(async () => {
    gateway = await startGateway({ db: target.db(), catalog: testCatalog(), startWorker: false });
    run = Date.now();
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const postJson = async (path: string, body: unknown) => {
    const response = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, text: await response.text() };
  };
  const invoiceStatus = async (reference: string) =>
    merchantPost(gateway.url, '/merchant-api/invoices/status', { reference_id: reference }, SANDBOX_SECRET);

  /** The payer's invoice, created with the form the merchant signed for them. */
  async function payersInvoice(reference: string) {
    const form = {
      public_key: UAH_KEY,
      reference_id: reference,
      service: 'payment_card_uah_hpp',
      currency: 'uah',
      amount: '500.00',
    };
    const created = await postJson('/public-api/payment-invoices', signed(form));
    expect(created.status).toBe(201);
    const data = JSON.parse(created.text).data as {
      id: string;
      active_payment: { payload: { name: string; value: string }[] };
    };
    const token = data.active_payment.payload.find((p) => p.name === 'token')?.value ?? '';
    return { form, id: data.id, token };
  }

  /** What the third party sends: the documented body, public key and a guessed reference, no signature. */
  const thirdPartyBody = (reference: string) => ({
    public_key: UAH_KEY,
    reference_id: reference,
    description: 'deposit',
    service: 'payment_card_uah_hpp',
    currency: 'uah',
    amount: 500,
  });

  /**
   * The third party's repeats of the payer's create of `reference`: the payer's body as it is, with
   * `changes`, and with a forged signature. Each is 401 and carries nothing of the invoice.
   */
  async function expectNoTokenToRepeats(
    reference: string,
    invoice: { token: string; id: string },
    changes: Record<string, unknown>[],
  ) {
    for (const body of [
      thirdPartyBody(reference),
      ...changes.map((change) => ({ ...thirdPartyBody(reference), ...change })),
      {
        ...thirdPartyBody(reference),
        expires: Math.floor(Date.now() / 1000) + 600,
        signature: 'ab'.repeat(32),
      },
    ]) {
      const repeat = await postJson('/public-api/payment-invoices', body);
      expect(repeat.status).toBe(401);
      expect(JSON.parse(repeat.text).error).toMatchObject({ name: 'bad_form_signature', field: 'signature' });
      expect(repeat.text).not.toContain(invoice.token);
      expect(repeat.text).not.toContain(invoice.id);
      expect(repeat.text).not.toContain('500');
    }
  }

  it('refuses a repeat for an existing reference without the merchant signature, and leaks nothing', async () => {
    const reference = String(run);
    const payer = await payersInvoice(reference);
    await expectNoTokenToRepeats(reference, payer, [{ service: 'default' }]);
    // A different amount is refused the same way: no 409 telling that the reference has an invoice.
    const other = await postJson('/public-api/payment-invoices', {
      ...thirdPartyBody(reference),
      amount: 10,
    });
    expect(other.status).toBe(401);
    // The payer repeating their own signed form still gets their invoice and token (a reload).
    const again = await postJson('/public-api/payment-invoices', signed(payer.form));
    expect(again.status).toBe(200);
    expect(again.text).toContain(payer.token);
  });

  it('refuses a form signed for another reference, amount or currency (the third party signs their own)', async () => {
    const victim = `${run}1`;
    await payersInvoice(victim);
    // The third party's own deposit gets a signed form; they swap in the victim's reference or a new amount.
    const own = signed({
      public_key: UAH_KEY,
      reference_id: `${run}2`,
      service: 'payment_card_uah_hpp',
      currency: 'uah',
      amount: '500.00',
    });
    for (const body of [
      { ...own, reference_id: victim },
      { ...own, amount: '5000.00' },
      { ...own, expires: own.expires + 1 },
      { ...own, signature: own.signature.toUpperCase() },
    ]) {
      const answer = await postJson('/public-api/payment-invoices', body);
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.text).error.name).toBe('bad_form_signature');
    }
  });

  it("answers the spec's unsigned create of a new reference once: a third party repeating it gets no token", async () => {
    // The payer's client sends exactly the spec's body (no signature): the reference is new, so it
    // creates the invoice and answers its token.
    const reference = `${run}3`;
    const payers = await postJson('/public-api/payment-invoices', thirdPartyBody(reference));
    expect(payers.status).toBe(201);
    const data = JSON.parse(payers.text).data as {
      id: string;
      active_payment: { payload: { name: string; value: string }[] };
    };
    const token = data.active_payment.payload.find((p) => p.name === 'token')?.value ?? '';
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    // The third party repeats the payer's create byte for byte, with other amounts and services,
    // and with a forged signature: never the token, the id or the amount (the simplified form: below).
    await expectNoTokenToRepeats(reference, { token, id: data.id }, [
      { amount: 10 },
      { service: 'default', description: 'again' },
    ]);
    // One invoice, still open, with the payer's amount; the merchant's own signed form reaches it.
    expect((await invoiceStatus(reference)).json.data).toMatchObject({ status: 'created', amount: '500.00' });
    const merchants = await postJson(
      '/public-api/payment-invoices',
      signed({ ...thirdPartyBody(reference), amount: '500.00' }),
    );
    expect(merchants.status).toBe(200);
    expect(merchants.text).toContain(token);
  });

  it('refuses an expired form, even correctly signed', async () => {
    const body = signed(
      {
        public_key: UAH_KEY,
        reference_id: `${run}4`,
        service: 'payment_card_uah_hpp',
        currency: 'uah',
        amount: 500,
      },
      { expires: Math.floor(Date.now() / 1000) - 1 },
    );
    const answer = await postJson('/public-api/payment-invoices', body);
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.text).error.name).toBe('form_expired');
    expect((await invoiceStatus(`${run}4`)).status).toBe(404);
  });

  it('refuses the simplified form without the signature: no page, no token in its forms', async () => {
    const reference = `${run}5`;
    const payer = await payersInvoice(reference);
    const page = await postForm(`${gateway.url}/public-api/payment-invoices/process`, {
      amount: '500.00',
      reference_id: reference,
      currency: 'UAH',
      service: 'payment_card_uah_hpp',
      public_key: UAH_KEY,
    });
    expect(page.status).toBe(403);
    expect(page.text).not.toContain(payer.token);
    expect(page.text).not.toContain(payer.id);
    // The signed simplified form (what the exchange hands the payer) opens the page.
    const signedPage = await postForm(
      `${gateway.url}/public-api/payment-invoices/process`,
      signedFormFields({ ...payer.form, currency: 'UAH' }),
    );
    expect(signedPage.status).toBe(200);
    expect(signedPage.text).toContain(payer.token);
  });

  it('refuses the simplified form for a guessed future reference: no invoice is created', async () => {
    const future = `${run}6`;
    const page = await postForm(`${gateway.url}/public-api/payment-invoices/process`, {
      amount: '500',
      reference_id: future,
      currency: 'uah',
      service: 'default',
      public_key: UAH_KEY,
    });
    expect(page.status).toBe(403);
    expect((await invoiceStatus(future)).status).toBe(404);
  });

  it('cannot cancel, open, drive or return from the invoice without its token', async () => {
    const reference = `${run}7`;
    const payer = await payersInvoice(reference);
    const forged = { invoice_id: payer.id, token: '0'.repeat(64) };
    const guesses: Record<string, string>[] = [
      { invoice_id: payer.id },
      forged,
      { invoice_id: payer.id, token: '' },
      { reference_id: reference },
      { reference_id: reference, public_key: UAH_KEY },
    ];
    for (const fields of guesses) {
      const cancel = await postForm(`${gateway.url}/public-api/payment-invoices/cancel`, fields);
      expect([403, 404]).toContain(cancel.status);
      const pay = await postForm(`${gateway.url}/public-api/payment-invoices/pay`, {
        ...fields,
        card_number: '4242424242424242',
        expiry: '12/39',
        cvc: '123',
      });
      expect([403, 404]).toContain(pay.status);
      const query = new URLSearchParams(fields).toString();
      for (const path of ['page', 'return']) {
        const answer = await fetch(`${gateway.url}/public-api/payment-invoices/${path}?${query}`, {
          redirect: 'manual',
        });
        expect([403, 404]).toContain(answer.status);
        expect(await answer.text()).not.toContain(payer.token);
      }
    }
    expect((await invoiceStatus(reference)).json.data).toMatchObject({ status: 'created' });
    // The payer's own token still works.
    const page = await fetch(
      `${gateway.url}/public-api/payment-invoices/page?invoice_id=${payer.id}&token=${payer.token}`,
    );
    expect(page.status).toBe(200);
  });

  it('keeps the signature independent of amount spelling: 500, "500", "500.00" are one form', async () => {
    const reference = `${run}8`;
    const base = {
      public_key: UAH_KEY,
      reference_id: reference,
      service: 'payment_card_uah_hpp',
      currency: 'UAH',
    };
    const { expires, signature } = formSignature({ ...base, amount: '500' });
    const first = await postJson('/public-api/payment-invoices', {
      ...base,
      amount: '500.00',
      expires,
      signature,
    });
    expect(first.status).toBe(201);
    const again = await postJson('/public-api/payment-invoices', {
      ...base,
      amount: 500,
      expires: String(expires),
      signature,
    });
    expect(again.status).toBe(200);
  });
});
