import { Type } from 'typebox';
import type { FiatDeps } from '../fiat/deps.js';
import type { App } from '../http/typed.js';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Where the gateway's hosted page sends the payer back (`return_url`): a plain page with the outcome
 * the gateway reported. It changes nothing: the deposit is credited by the signed callback only.
 */
export function paygateReturnRoutes(app: App, _deps: FiatDeps): void {
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
      const { reference_id: reference = '', status = '' } = request.query;
      const paid = status === 'success';
      const title = paid ? 'Payment received' : 'Payment not completed';
      const detail = paid
        ? 'Thank you. Your deposit is credited as soon as the payment gateway confirms it, usually within seconds.'
        : 'The payment did not go through, and nothing was charged to your exchange balance.';
      const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title></head>
<body><main><h1 id="outcome" data-status="${escapeHtml(status)}">${title}</h1>
<p>${detail}</p>${reference ? `<p>Deposit reference: <strong id="reference">${escapeHtml(reference)}</strong></p>` : ''}
</main></body></html>`;
      return reply.type('text/html; charset=utf-8').send(html);
    },
  );
}
