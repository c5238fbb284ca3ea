import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../src/admin/commands.js';
import { deadCallbacks } from '../../src/callbacks/dead-letter.js';
import { SANDBOX_SECRET, testCatalog } from '../support/catalog.js';
import { postForm, type RunningGateway, startGateway } from '../support/gateway.js';
import { postInvoice } from '../support/invoice-form.js';
import { merchantPost } from '../support/merchant.js';
import { type Receiver, startReceiver } from '../support/receiver.js';
import type { Target } from '../support/targets.js';

type Json = Record<string, unknown>;

/** Sequenced callbacks, the events API, dead letters and secret rotation, on PostgreSQL and PGlite. */
export function webhooksContract(target: Target): void {
  describe(`webhooks a merchant can reason about (${target.name})`, () => {
    let gateway: RunningGateway;
    let receiver: Receiver;
    let offsetMs = 0;
    const now = () => Date.now() + offsetMs;
    beforeAll(async () => {
      receiver = await startReceiver(SANDBOX_SECRET);
      gateway = await startGateway({
        db: target.db(),
        catalog: testCatalog({ callbackUrl: receiver.url }),
        now,
        startWorker: false,
        callbackMaxAttempts: 3,
        callbackRetryBaseMs: 1_000,
      });
    });
    afterAll(async () => {
      await gateway?.close();
      await receiver?.close();
    });

    const newInvoice = async () => {
      const reference = `dep-${randomUUID()}`;
      const response = await postInvoice(gateway.url, reference, '500');
      // biome-ignore lint/suspicious/noExplicitAny: nested JSON read ad hoc
      const json = (await response.json()) as any;
      const payload = Object.fromEntries(
        (json.data.active_payment.payload as { name: string; value: string }[]).map((p) => [p.name, p.value]),
      ) as { invoice_id: string; token: string };
      return { reference, id: payload.invoice_id, payload };
    };
    const pay = (payload: Json, card: string) =>
      postForm(`${gateway.url}/public-api/payment-invoices/pay`, {
        ...(payload as Record<string, string>),
        card_number: card,
        expiry: '12/30',
        cvc: '123',
      });
    const events = (after: number, limit?: number, secret = SANDBOX_SECRET) =>
      merchantPost(gateway.url, '/merchant-api/events', { after, ...(limit ? { limit } : {}) }, secret, {
        timestamp: Math.floor(now() / 1000),
      });
    /** Runs the worker until nothing is due now (a few passes). */
    const drain = async () => {
      for (let i = 0; i < 4; i += 1) await gateway.worker.runOnce();
    };

    it("numbers each object's callbacks 1, 2, 3 in the order they happen", async () => {
      const invoice = await newInvoice();
      await pay(invoice.payload, '4000000000003220');
      await postForm(`${gateway.url}/public-api/payment-invoices/confirm`, {
        ...invoice.payload,
        code: '123456',
      });
      await drain();
      const mine = receiver.received.filter((r) => r.body.id === invoice.id).map((r) => r.body);
      expect(mine.map((b) => [b.sequence, b.status])).toEqual([
        [1, 'created'],
        [2, 'processing'],
        [3, 'success'],
      ]);
    });

    it('shows the merchant every declined card: attempts and last decline in the status, an attempt_failed event and callback', async () => {
      const invoice = await newInvoice();
      const status = async () =>
        (
          await merchantPost(
            gateway.url,
            '/merchant-api/invoices/status',
            { reference_id: invoice.reference },
            SANDBOX_SECRET,
            {
              timestamp: Math.floor(now() / 1000),
            },
          )
        ).json.data as Json;
      expect(await status()).toMatchObject({ status: 'created', card_attempts: 0, last_decline: null });
      await pay(invoice.payload, '4000000000000002');
      const declined = await status();
      expect(declined).toMatchObject({
        status: 'created',
        card_attempts: 1,
        last_decline: { reason: 'declined', at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
      });
      // A wrong 3-D Secure code is the second card that did not pay; the third pays.
      await pay(invoice.payload, '4000000000003220');
      await postForm(`${gateway.url}/public-api/payment-invoices/confirm`, {
        ...invoice.payload,
        code: '000000',
      });
      await pay(invoice.payload, '4242424242424242');
      const paid = await status();
      // The last decline stays for the merchant once another card paid.
      expect(paid).toMatchObject({
        status: 'success',
        card_attempts: 2,
        last_decline: { reason: 'authentication_failed' },
      });
      // Five events of one object: one per pass.
      await drain();
      await drain();
      const mine = receiver.received.filter((r) => r.body.id === invoice.id).map((r) => r.body);
      expect(mine.map((b) => [b.sequence, b.status, b.failure_reason, b.attempt, b.attempts_left])).toEqual([
        [1, 'created', null, undefined, undefined],
        [2, 'attempt_failed', 'declined', 1, 2],
        [3, 'processing', null, undefined, undefined],
        [4, 'attempt_failed', 'authentication_failed', 2, 1],
        [5, 'success', null, undefined, undefined],
      ]);
      expect(mine[1]).toMatchObject({
        event_id: `${invoice.id}:attempt_failed:1`,
        object: 'invoice',
        reference_id: invoice.reference,
        occurred_at: (declined.last_decline as Json).at,
      });
      // The events API has the same events.
      const all = (await events(0, 500)).json.data as Json[];
      expect(all.filter((e) => e.id === invoice.id).map((e) => e.status)).toEqual(mine.map((b) => b.status));
    });

    it('lets a merchant catch up through the events API: callback bodies plus position, in order', async () => {
      const start = (await events(0, 500)).json.data as Json[];
      const last = Number(start.at(-1)?.position ?? 0);
      const a = await newInvoice();
      const b = await newInvoice();
      await pay(a.payload, '4242424242424242');
      // Not delivered yet (no worker pass): the pull API has them all the same.
      const fresh = (await events(last)).json.data as Json[];
      expect(fresh.map((e) => [e.id, e.status, e.sequence])).toEqual([
        [a.id, 'created', 1],
        [b.id, 'created', 1],
        [a.id, 'success', 2],
      ]);
      const positions = fresh.map((e) => Number(e.position));
      expect([...positions].sort((x, y) => x - y)).toEqual(positions);
      expect(new Set(positions).size).toBe(3);
      expect(fresh[2]).toMatchObject({
        event_id: `${a.id}:success`,
        object: 'invoice',
        reference_id: a.reference,
      });
      // Paging: one at a time from the last position seen.
      const first = (await events(last, 1)).json.data as Json[];
      expect(first).toHaveLength(1);
      const next = (await events(Number(first[0]?.position), 1)).json.data as Json[];
      expect(next[0]?.id).toBe(b.id);
      expect((await events(positions[2] ?? 0)).json.data).toEqual([]);
      // The callbacks, once sent, carry the same bodies (without position).
      await drain();
      const delivered = receiver.received.find((r) => r.body.event_id === `${a.id}:success`)?.body;
      const { position: _position, ...body } = fresh[2] ?? {};
      expect(delivered).toEqual(body);
      // Signed like every merchant call.
      const forged = await events(0, 1, 'not-the-secret');
      expect(forged.status).toBe(401);
    });

    it('dead-letters a callback after CALLBACK_MAX_ATTEMPTS, and the operator tool retries it', async () => {
      const invoice = await newInvoice();
      receiver.respond = (_n, body) => (body.id === invoice.id ? 409 : 200);
      try {
        for (let attempt = 0; attempt < 3; attempt += 1) {
          await drain();
          offsetMs += 10_000;
        }
        const dead = (await deadCallbacks(target.db())).filter((d) => d.object_id === invoice.id);
        expect(dead).toHaveLength(1);
        expect(dead[0]).toMatchObject({ attempts: 3, last_error: 'HTTP 409', sequence: 1 });
        const tries = receiver.received.filter((r) => r.body.id === invoice.id).length;
        await drain();
        expect(receiver.received.filter((r) => r.body.id === invoice.id)).toHaveLength(tries);
        receiver.respond = () => 200;
        const printed: unknown[] = [];
        const code = await runAdmin(['callbacks', 'retry', String(dead[0]?.id)], {
          db: target.db(),
          catalog: testCatalog(),
          now,
          print: (value) => printed.push(value),
        });
        expect(code).toBe(0);
        await drain();
        const last = receiver.received.filter((r) => r.body.id === invoice.id).at(-1);
        expect(last?.answered).toBe(200);
        expect((await deadCallbacks(target.db())).some((d) => d.object_id === invoice.id)).toBe(false);
      } finally {
        receiver.respond = () => 200;
        offsetMs = 0;
      }
    });

    it('rotates a merchant secret: both accepted in the grace period, callbacks signed with the new one', async () => {
      const printed: { secret: string }[] = [];
      await runAdmin(['secrets', 'rotate', 'exchange', '--grace-seconds', '600'], {
        db: target.db(),
        catalog: testCatalog(),
        now,
        print: (value) => printed.push(value as { secret: string }),
      });
      const fresh = printed[0]?.secret ?? '';
      expect(fresh).toMatch(/^whsec_/);
      // The gateway's cache follows within a second.
      offsetMs += 1_500;
      try {
        expect((await events(0, 1, fresh)).status).toBe(200);
        expect((await events(0, 1, SANDBOX_SECRET)).status).toBe(200);
        const invoice = await newInvoice();
        await drain();
        const callback = receiver.received.find((r) => r.body.id === invoice.id);
        const timestamp = String(callback?.headers['x-paygate-timestamp']);
        expect(callback?.headers['x-paygate-signature']).toBe(
          createHmac('sha256', fresh).update(`${timestamp}.${callback?.raw}`).digest('hex'),
        );
        offsetMs += 600_000;
        expect((await events(0, 1, SANDBOX_SECRET)).status).toBe(401);
        expect((await events(0, 1, fresh)).status).toBe(200);
      } finally {
        offsetMs = 0;
        await target.db().query('DELETE FROM merchant_secrets');
      }
    });
  });
}
