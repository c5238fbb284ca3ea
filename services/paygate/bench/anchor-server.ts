/**
 * The anchor of `POST /public-api/payment-invoices`: a bare Fastify route checking the merchant's
 * form signature (README "Signed invoice forms", with the service's own check, under
 * `MERCHANT_SECRET`) and doing the same INSERTs (the invoice and its `created` callback in the
 * outbox) and COMMIT through the service's own storage and SQL, with none of the gateway's other work
 * (no public-key lookup, pricing, field checks, Idempotency-Key, schema validation or serialisation).
 * The signature check stays in the anchor because no real creation can skip it. `DATABASE_URL` names
 * the database.
 */
import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import { invoiceEvent } from '../src/callbacks/event.js';
import { enqueueCallback } from '../src/callbacks/outbox.js';
import { openStorage } from '../src/db/open.js';
import { checkInvoiceForm } from '../src/domain/invoice-form.js';
import { insertInvoice } from '../src/store/invoices.js';

const db = await openStorage({ kind: 'postgres', url: process.env.DATABASE_URL ?? '', poolSize: 10 });
const secret = process.env.MERCHANT_SECRET ?? 'sandbox-exchange-secret';
const app = Fastify({ logger: false });
app.get('/health', async () => ({ status: 'ok' }));
interface SignedForm {
  public_key: string;
  reference_id: string;
  currency: string;
  amount: string;
  service: string;
  expires: unknown;
  signature: unknown;
}
app.post<{ Body: SignedForm }>('/invoices', async (request, reply) => {
  const now = new Date();
  const form = request.body;
  const check = checkInvoiceForm(
    secret,
    {
      publicKey: form.public_key,
      referenceId: form.reference_id,
      currency: form.currency,
      amount: form.amount,
      service: form.service,
    },
    { expires: form.expires, signature: form.signature },
    now.getTime(),
  );
  if (!check.ok) return reply.code(401).send({ error: { name: 'bad_form_signature', reason: check.reason } });
  const invoice = await db.transaction(async (tx) => {
    const inserted = await insertInvoice(tx, {
      id: `inv_${randomBytes(10).toString('hex')}`,
      merchantId: 'exchange',
      referenceId: form.reference_id,
      service: 'payment_card_uah_hpp',
      currency: 'UAH',
      amount: '500.00',
      fee: '7.50',
      total: '507.50',
      description: '',
      serviceFields: {},
      testMode: true,
      createdAt: now,
      expiresAt: new Date(now.getTime() + 1_800_000),
    });
    if (inserted) await enqueueCallback(tx, 'exchange', invoiceEvent(inserted), now);
    return inserted;
  });
  return reply.code(201).send({ data: invoice });
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
process.on(
  'SIGTERM',
  () =>
    void app
      .close()
      .then(() => db.close())
      .then(() => process.exit(0)),
);
