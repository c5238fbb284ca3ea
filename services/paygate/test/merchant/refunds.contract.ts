import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_SECRET, testCatalog } from '../support/catalog.js';
import { postForm, type RunningGateway, startGateway } from '../support/gateway.js';
import { postInvoice } from '../support/invoice-form.js';
import { merchantPost } from '../support/merchant.js';
import { type Receiver, startReceiver } from '../support/receiver.js';
import type { Target } from '../support/targets.js';

/** Refunds through the signed merchant API, on PostgreSQL and PGlite. */
export function refundsContract(target: Target): void {
  describe(`refunds (${target.name})`, () => {
    let gateway: RunningGateway;
    let receiver: Receiver;
    let offsetMs = 0;
    beforeAll(async () => {
      receiver = await startReceiver(SANDBOX_SECRET);
      gateway = await startGateway({
        db: target.db(),
        catalog: testCatalog({ callbackUrl: receiver.url }),
        now: () => Date.now() + offsetMs,
        startWorker: false,
        payoutSettleMs: 2_000,
      });
    });
    afterAll(async () => {
      await gateway?.close();
      await receiver?.close();
    });

    /** A paid invoice (card 4242..., or `card`) of `amount` UAH; returns its reference. */
    const paidInvoice = async (amount = '500', card = '4242424242424242') => {
      const reference = `dep-${randomUUID()}`;
      const response = await postInvoice(gateway.url, reference, amount);
      // biome-ignore lint/suspicious/noExplicitAny: nested JSON read ad hoc
      const json = (await response.json()) as any;
      const payload = Object.fromEntries(
        (json.data.active_payment.payload as { name: string; value: string }[]).map((p) => [p.name, p.value]),
      );
      if (card) {
        const paid = await postForm(`${gateway.url}/public-api/payment-invoices/pay`, {
          ...payload,
          card_number: card,
          expiry: '12/30',
          cvc: '123',
        });
        expect(paid.status).toBe(303);
      }
      return reference;
    };
    const refund = (invoiceReference: string, amount: string, reference = `rf-${randomUUID()}`) =>
      merchantPost(
        gateway.url,
        '/merchant-api/refunds',
        { reference_id: reference, invoice_reference_id: invoiceReference, amount },
        SANDBOX_SECRET,
      );

    it('refunds part, then the rest, and refuses a cent more', async () => {
      const invoice = await paidInvoice('500');
      const first = await refund(invoice, '200');
      expect(first.status).toBe(201);
      expect(first.json.data).toMatchObject({
        invoice_reference_id: invoice,
        status: 'processing',
        currency: 'UAH',
        amount: '200.00',
        failure_reason: null,
      });
      expect((await refund(invoice, '300.00')).status).toBe(201);
      const over = await refund(invoice, '0.01');
      expect(over.status).toBe(422);
      expect(over.json.error).toMatchObject({ name: 'refund_exceeds_paid', field: 'amount' });
    });

    it('answers a repeated reference with the same refund (200), 409 for another amount', async () => {
      const invoice = await paidInvoice('500');
      const reference = `rf-${randomUUID()}`;
      const first = await refund(invoice, '100', reference);
      const again = await refund(invoice, '100.00', reference);
      expect(again.status).toBe(200);
      expect(again.json.data).toEqual(first.json.data);
      expect((await refund(invoice, '101', reference)).status).toBe(409);
      const status = await merchantPost(
        gateway.url,
        '/merchant-api/refunds/status',
        { reference_id: reference },
        SANDBOX_SECRET,
      );
      expect(status.json.data).toEqual(first.json.data);
      const missing = await merchantPost(
        gateway.url,
        '/merchant-api/refunds/status',
        { reference_id: 'nope' },
        SANDBOX_SECRET,
      );
      expect(missing.status).toBe(404);
    });

    it('refuses an unpaid or unknown invoice and an unsigned request', async () => {
      const unpaid = await paidInvoice('500', '');
      expect((await refund(unpaid, '10')).json.error).toMatchObject({ name: 'invoice_not_paid' });
      expect((await refund('no-such-invoice', '10')).status).toBe(404);
      const unsigned = await fetch(`${gateway.url}/merchant-api/refunds`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(unsigned.status).toBe(401);
    });

    it('never refunds more than was paid under 20 concurrent requests', async () => {
      const invoice = await paidInvoice('500');
      const answers = await Promise.all(Array.from({ length: 20 }, () => refund(invoice, '100')));
      expect(answers.filter((a) => a.status === 201)).toHaveLength(5);
      expect(answers.filter((a) => a.status === 422)).toHaveLength(15);
    });

    it('settles a refund, calls the merchant back for each status, and a failed refund frees its amount', async () => {
      const good = await paidInvoice('500');
      const bad = await paidInvoice('500', '4000000000000119');
      const ok = await refund(good, '500');
      const failing = await refund(bad, '500');
      offsetMs += 3_000;
      try {
        await gateway.worker.runOnce();
        await gateway.worker.runOnce();
      } finally {
        offsetMs = 0;
      }
      const okId = (ok.json.data as { id: string }).id;
      const badId = (failing.json.data as { id: string }).id;
      await receiver.waitFor((all) =>
        [okId, badId].every((id) => all.some((r) => r.body.id === id && r.body.status !== 'processing')),
      );
      const ofOk = receiver.received.filter((r) => r.body.id === okId).map((r) => r.body);
      expect(ofOk.map((b) => b.status)).toEqual(['processing', 'success']);
      expect(ofOk[1]).toMatchObject({
        object: 'refund',
        event_id: `${okId}:success`,
        reference_id: (ok.json.data as { reference_id: string }).reference_id,
        invoice_reference_id: good,
        amount: '500.00',
        failure_reason: null,
      });
      expect(receiver.received.every((r) => r.signatureValid)).toBe(true);
      const failed = receiver.received.find((r) => r.body.id === badId && r.body.status === 'failed');
      expect(failed?.body.failure_reason).toBe('processor_error');
      expect((await refund(bad, '500')).status).toBe(201);
      expect((await refund(good, '0.01')).status).toBe(422);
    });
  });
}
