import { randomBytes } from 'node:crypto';
import { html } from '@platform/checkout-look/html';
import { checkoutLayout } from '@platform/checkout-look/layout';
import { Type } from 'typebox';
import type { App } from '../http/typed.js';

/**
 * The bundled `try_it` merchant's two addresses, served by the gateway itself (config/gateway.yaml
 * gives them as paths): the README's Try-it invoices and payouts belong to it, so their callbacks are
 * acknowledged here (never retried, never sent to the exchange, which does not know their references)
 * and the payer returns to a page that says what happened without promising any credit.
 */
export function tryItRoutes(app: App): void {
  app.post(
    '/try-it/callback',
    {
      schema: {
        tags: ['try it'],
        summary: "The try-it merchant's callback receiver: acknowledges every callback, keeps nothing",
      },
    },
    async (request, reply) => {
      request.log.debug('try-it callback acknowledged');
      return reply.status(200).send({ received: true });
    },
  );

  app.get(
    '/try-it/return',
    {
      schema: {
        tags: ['try it'],
        summary: "The try-it merchant's return page (HTML)",
        querystring: Type.Object({
          reference_id: Type.Optional(Type.String({ maxLength: 100 })),
          invoice_id: Type.Optional(Type.String({ maxLength: 100 })),
          status: Type.Optional(Type.String({ maxLength: 40 })),
        }),
      },
    },
    async (request, reply) => {
      const { reference_id: reference = '', invoice_id: invoice = '', status = '' } = request.query;
      const paid = status === 'success';
      const title = paid ? 'Try-it payment completed' : 'Try-it payment not completed';
      const nonce = randomBytes(16).toString('base64');
      const body = html`<h1>${title}</h1>
<p class="status ${paid ? 'success' : 'failed'}" role="status">This invoice belongs to the gateway's try-it merchant: nothing is credited anywhere, and its callbacks were acknowledged by the gateway itself.</p>
<dl class="summary">
<dt>Invoice</dt><dd><code>${invoice}</code></dd>
<dt>Reference</dt><dd><code>${reference}</code></dd>
<dt>Status</dt><dd>${status}</dd>
</dl>`;
      return reply
        .header('content-type', 'text/html; charset=utf-8')
        .header('content-security-policy', `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'self'`)
        .send(checkoutLayout({ title, nonce, body }));
    },
  );
}
