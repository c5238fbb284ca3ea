import { FAVICON_ICO } from '@platform/checkout-look/favicon';
import { html } from '@platform/checkout-look/html';
import { checkoutLayout } from '@platform/checkout-look/layout';
import { Type } from 'typebox';
import { referenceNumber } from '../fiat/callbacks.js';
import type { FiatDeps } from '../fiat/deps.js';
import type { App } from '../http/typed.js';
import { depositById } from '../wallet/deposit-store.js';

/**
 * Where the gateway's hosted page sends the payer back (`return_url`): a page with the outcome the
 * gateway reported, in the hosted page's look (`@platform/checkout-look`). It changes nothing: the
 * deposit is credited by the signed callback only.
 */
export function paygateReturnRoutes(app: App, deps: FiatDeps): void {
  app.get(
    '/favicon.ico',
    { schema: { tags: ['payment gateway'], summary: "The payer pages' icon (browsers ask for it)" } },
    async (_request, reply) =>
      reply
        .header('content-type', 'image/x-icon')
        .header('cache-control', 'public, max-age=86400')
        .send(FAVICON_ICO),
  );
  app.get(
    '/v3/paygate/return',
    {
      schema: {
        tags: ['payment gateway'],
        summary: 'Return page after the hosted payment page',
        description:
          'The payer lands here from the gateway with `reference_id` (the deposit id), `invoice_id` and ' +
          '`status`. Informational only: the deposit is credited by the signed callback, never by this page.',
        querystring: Type.Object({
          reference_id: Type.Optional(Type.String({ maxLength: 100 })),
          invoice_id: Type.Optional(Type.String({ maxLength: 100 })),
          status: Type.Optional(Type.String({ maxLength: 40 })),
        }),
        produces: ['text/html'],
      },
    },
    async (request, reply) => {
      const { reference_id: reference = '', invoice_id: invoiceId = '', status = '' } = request.query;
      // Only a fiat deposit of this exchange is ever credited: for any other reference (an invoice
      // another merchant or a try tool created) the page must not promise a credit.
      const id = referenceNumber(reference);
      const deposit = id === undefined ? undefined : await depositById(deps.db, id);
      const known = deposit !== undefined && deposit.provider !== null;
      const paid = status === 'success';
      const title = !known
        ? 'Unknown deposit reference'
        : paid
          ? 'Payment received'
          : 'Payment not completed';
      const detail = !known
        ? 'This exchange has no deposit with this reference, so nothing will be credited to an exchange balance for it. If you paid, keep the invoice id and contact support.'
        : paid
          ? 'Thank you. Your deposit is credited as soon as the payment gateway confirms it, usually within seconds.'
          : 'The payment did not go through, and nothing was charged to your exchange balance.';
      if (!known) void reply.status(404);
      const tone = !known ? 'unknown' : paid ? 'success' : 'failed';
      const body = html`<h1 id="outcome" data-status="${status}">${title}</h1>
<p class="status ${tone}" role="status">${detail}</p>
${
  reference || invoiceId
    ? html`<dl class="summary">
${reference ? html`<dt>Deposit reference</dt><dd><strong id="reference">${reference}</strong></dd>` : ''}
${invoiceId ? html`<dt>Invoice</dt><dd><code>${invoiceId}</code></dd>` : ''}
</dl>`
    : ''
}
<p><a href="/">Back to the exchange</a></p>`;
      return reply.type('text/html; charset=utf-8').send(checkoutLayout({ title, body }));
    },
  );
}
