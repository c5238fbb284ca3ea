import { randomBytes } from 'node:crypto';
import { Type } from 'typebox';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { merchantAuth } from '../http/merchant-auth.js';
import { errorResponses } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { pageToken } from '../payments/page-token.js';
import { findInvoice, findInvoiceByReference } from '../store/invoices.js';

const LINK_PATH = '/public-api/payment-links';

/**
 * Payment links: `POST /merchant-api/payment-links` (signed) gives an address for an invoice that a
 * merchant can send by mail; `GET /public-api/payment-links/<token>` opens the invoice's hosted page
 * once (it is marked used in the same statement that checks it, so two clicks cannot both pass) and
 * only before the link's expiry, never after the invoice's own.
 */
export function paymentLinkRoutes(app: App, deps: RouteDeps): void {
  app.post(
    '/merchant-api/payment-links',
    {
      preValidation: merchantAuth(deps),
      schema: {
        tags: ['merchant'],
        summary: 'A single-use, expiring payment link for an invoice',
        security: [{ paygateMerchant: [], paygateTimestamp: [], paygateSignature: [] }],
        body: Type.Object({
          invoice_reference_id: Type.String({ minLength: 1, maxLength: 64 }),
          expires_in: Type.Optional(
            Type.Integer({ minimum: 60, maximum: 604_800, description: 'seconds; default 86400' }),
          ),
        }),
        response: {
          201: Type.Object({ data: Type.Object({ url: Type.String(), expires_at: Type.String() }) }),
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const merchant = request.merchant;
      if (!merchant) throw new ApiError('unknown_merchant', 'the request is not signed');
      const invoice = await findInvoiceByReference(deps.db, merchant.id, request.body.invoice_reference_id);
      if (!invoice)
        throw new ApiError('invoice_not_found', 'no invoice with this reference_id', 'invoice_reference_id');
      const now = deps.now();
      const requested = now + (request.body.expires_in ?? 86_400) * 1_000;
      // Never past the invoice's own expiry: the page could not be paid then anyway.
      const expiresAt = new Date(Math.min(requested, invoice.expiresAt.getTime()));
      const token = randomBytes(24).toString('base64url');
      await deps.db.query(
        `INSERT INTO payment_links (token, merchant_id, invoice_id, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)`,
        [token, merchant.id, invoice.id, expiresAt.toISOString(), new Date(now).toISOString()],
      );
      return reply.code(201).send({
        data: { url: `${deps.publicUrl}${LINK_PATH}/${token}`, expires_at: expiresAt.toISOString() },
      });
    },
  );

  app.get<{ Params: { token: string } }>(
    `${LINK_PATH}/:token`,
    { schema: { tags: ['public'], summary: 'Open a payment link (once)', hide: true } },
    async (request, reply) => {
      const { rows } = await deps.db.query<{ invoice_id: string }>(
        `UPDATE payment_links SET used_at = $2 WHERE token = $1 AND used_at IS NULL AND expires_at > $2
         RETURNING invoice_id`,
        [request.params.token, new Date(deps.now()).toISOString()],
      );
      const invoice = rows[0] ? await findInvoice(deps.db, rows[0].invoice_id) : undefined;
      const merchant = invoice ? deps.catalog.merchants.get(invoice.merchantId) : undefined;
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      if (!invoice || !merchant) {
        return reply
          .code(410)
          .type('text/html; charset=utf-8')
          .send(
            '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Link unavailable</title></head>' +
              '<body><main><h1>This payment link has expired or was already used</h1>' +
              '<p>Ask the merchant for a new one.</p></main></body></html>',
          );
      }
      const query = new URLSearchParams({
        invoice_id: invoice.id,
        token: pageToken(merchant.secret, invoice.id),
      });
      return reply.redirect(`${deps.publicUrl}/public-api/payment-invoices/page?${query}`, 303);
    },
  );
}
