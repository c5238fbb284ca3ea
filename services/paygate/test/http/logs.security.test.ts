import { Writable } from 'node:stream';
import { createLogger } from '@platform/logging/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_SECRET, testCatalog } from '../support/catalog.js';
import { postForm, type RunningGateway, startGateway } from '../support/gateway.js';
import { postInvoice } from '../support/invoice-form.js';
import { merchantPost } from '../support/merchant.js';
import { usePgliteTarget } from '../support/targets.js';

describe('card data never reaches the logs', () => {
  const target = usePgliteTarget();
  const lines: string[] = [];
  let gateway: RunningGateway;
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    gateway = await startGateway({
      db: target.db(),
      catalog: testCatalog(),
      startWorker: false,
      logger: createLogger({ service: 'paygate', level: 'trace', format: 'json', destination: sink }),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('logs neither card numbers, codes nor page tokens at the most verbose level', async () => {
    const created = await postInvoice(gateway.url, 'logs-1', 100);
    const { data } = (await created.json()) as {
      data: { active_payment: { payload: { name: string; value: string }[] } };
    };
    const payload = Object.fromEntries(data.active_payment.payload.map((p) => [p.name, p.value]));
    const pay = (card_number: string) =>
      postForm(`${gateway.url}/public-api/payment-invoices/pay`, {
        ...payload,
        card_number,
        expiry: '12/30',
        cvc: '987',
      });
    await pay('4000000000003221'); // fails Luhn: refused and shown again
    const paid = await pay('4000000000003220');
    await fetch(`${gateway.url}${paid.location}`);
    await postForm(`${gateway.url}/public-api/payment-invoices/confirm`, { ...payload, code: '123456' });
    await merchantPost(
      gateway.url,
      '/merchant-api/payouts',
      {
        reference_id: 'logs-2',
        service: 'payment_card_uah',
        currency: 'UAH',
        amount: 50,
        fields: { card_number: '4000000000000119' },
      },
      SANDBOX_SECRET,
    );
    await merchantPost(
      gateway.url,
      '/merchant-api/payouts',
      {
        reference_id: 'logs-3',
        service: 'payment_card_uah',
        currency: 'UAH',
        amount: 50,
        fields: { card_number: '4242424242424241' },
      },
      SANDBOX_SECRET,
    );
    const log = lines.join('');
    expect(log).toContain('/public-api/payment-invoices/pay');
    for (const secret of [
      '4000000000003221',
      '4000000000003220',
      '4000000000000119',
      '4242424242424241',
      payload.token ?? 'x',
    ]) {
      expect(log).not.toContain(secret);
    }
    // Three- and six-digit values could appear by chance inside ids; look for them as form data instead.
    expect(log).not.toMatch(/cvc|card_number|"code":"\d/i);
  });
});
