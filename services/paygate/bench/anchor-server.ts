/**
 * The anchor of `POST /public-api/payment-invoices`: a bare Fastify route doing the same INSERTs
 * (the invoice and its `created` callback in the outbox) and COMMIT through the service's own
 * storage and SQL, with none of the gateway's work (no public-key lookup, pricing, field checks,
 * Idempotency-Key, schema validation or serialisation). `DATABASE_URL` names the database.
 */
import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import { invoiceEvent } from '../src/callbacks/event.js';
import { enqueueCallback } from '../src/callbacks/outbox.js';
import { openStorage } from '../src/db/open.js';
import { insertInvoice } from '../src/store/invoices.js';

const db = await openStorage({ kind: 'postgres', url: process.env.DATABASE_URL ?? '', poolSize: 10 });
const app = Fastify({ logger: false });
app.get('/health', async () => ({ status: 'ok' }));
app.post<{ Body: { reference_id: string; amount: string } }>('/invoices', async (request, reply) => {
  const now = new Date();
  const invoice = await db.transaction(async (tx) => {
    const inserted = await insertInvoice(tx, {
      id: `inv_${randomBytes(10).toString('hex')}`,
      merchantId: 'exchange',
      referenceId: request.body.reference_id,
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
