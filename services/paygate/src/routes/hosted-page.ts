import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Merchant } from '../catalog/catalog.js';
import { attemptsLeft } from '../domain/card-attempts.js';
import { checkCardForm } from '../domain/card-form.js';
import { returnOutcome } from '../domain/invoice.js';
import { ApiError } from '../errors.js';
import { type Locale, pageLocale, supportedLocale } from '../hpp/locale.js';
import {
  cardPage,
  challengePage,
  type PageContext,
  problemPage,
  resultPage,
  walletPage,
} from '../hpp/pages.js';
import type { RouteDeps } from '../http/deps.js';
import type { App } from '../http/typed.js';
import {
  cancelChallenge,
  cancelInvoice,
  confirmChallenge,
  createInvoice,
  decideWalletPayment,
  isInvoiceId,
  payWithCard,
} from '../payments/invoices.js';
import { pageToken, pageTokenValid } from '../payments/page-token.js';
import { findInvoice, type Invoice } from '../store/invoices.js';
import { PROCESS_PATH } from './invoices.js';

const BASE = '/public-api/payment-invoices';

// Form bodies: every value optional here and checked by hand, so a bad form gets an HTML answer.
const Form = (fields: Record<string, string>) =>
  Type.Object(
    Object.fromEntries(
      Object.entries(fields).map(([k, d]) => [k, Type.Optional(Type.String({ description: d }))]),
    ),
  );
const InvoiceForm = {
  invoice_id: 'the invoice id from the payload',
  token: 'the page token from the payload',
};

function send(reply: FastifyReply, status: number, nonce: string, page: string): FastifyReply {
  // The page runs only our inline style and script (by nonce), loads nothing from elsewhere,
  // posts forms only to the gateway and cannot be framed (clickjacking).
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .header(
      'content-security-policy',
      `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src 'self' data:; ` +
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    )
    .send(page);
}

function nonce(): string {
  return randomBytes(16).toString('base64');
}

function pageUrl(invoice: Invoice, token: string): string {
  return `${BASE}/page?invoice_id=${encodeURIComponent(invoice.id)}&token=${encodeURIComponent(token)}`;
}

/** The hosted payment page and its forms (gateway-contract.md "Public API"). */
export function hostedPageRoutes(app: App, deps: RouteDeps): void {
  /** The payer's language: the invoice's `locale` if the merchant chose one, else the browser's. */
  const localeOf = (request: FastifyRequest, invoice?: Invoice): Locale =>
    pageLocale(invoice?.locale, request.headers['accept-language']);
  const context = (invoice: Invoice, merchant: Merchant, n: string, locale: Locale): PageContext => {
    const service = deps.catalog.services.get(invoice.service);
    const method = service ? deps.catalog.methods.get(service.method) : undefined;
    // The service's fields the merchant filled, under their labels in the payer's language.
    const serviceFields = (service?.fields ?? [])
      .filter((field) => invoice.serviceFields[field.key] !== undefined)
      .map((field) => ({
        label: field.label[locale] ?? field.label.en ?? field.key,
        value: String(invoice.serviceFields[field.key]),
      }));
    return {
      invoice,
      merchantName: merchant.name,
      methodName: method?.name[locale] ?? method?.name.en ?? 'card',
      token: pageToken(merchant.secret, invoice.id),
      nonce: n,
      locale,
      pageFields: deps.catalog.pageFields,
      attemptsLeft: attemptsLeft(invoice.cardAttempts, deps.cardAttemptsMax),
      serviceFields,
    };
  };
  const isCard = (invoice: Invoice) => deps.catalog.services.get(invoice.service)?.method === 'payment_card';

  /** The page for the invoice's current state. */
  const current = (
    request: FastifyRequest,
    reply: FastifyReply,
    invoice: Invoice,
    merchant: Merchant,
  ): FastifyReply => {
    const n = nonce();
    const ctx = context(invoice, merchant, n, localeOf(request, invoice));
    if (invoice.status === 'created')
      return send(reply, 200, n, isCard(invoice) ? cardPage(ctx) : walletPage(ctx));
    if (invoice.status === 'processing') return send(reply, 200, n, challengePage(ctx));
    return send(reply, 200, n, resultPage(ctx));
  };

  /** Loads the invoice of a form or link and checks its page token; answers a problem page otherwise. */
  const authorised = async (
    request: FastifyRequest,
    reply: FastifyReply,
    invoiceId: string | undefined,
    token: string | undefined,
  ): Promise<{ invoice: Invoice; merchant: Merchant } | undefined> => {
    // An id that cannot be an invoice's (a NUL byte would be a database error) is simply unknown.
    const invoice = invoiceId && isInvoiceId(invoiceId) ? await findInvoice(deps.db, invoiceId) : undefined;
    const merchant = invoice ? deps.catalog.merchants.get(invoice.merchantId) : undefined;
    if (!invoice || !merchant || !pageTokenValid(merchant.secret, invoice.id, token)) {
      const n = nonce();
      send(reply, invoice ? 403 : 404, n, problemPage(n, localeOf(request, invoice), 'link_invalid'));
      return undefined;
    }
    return { invoice, merchant };
  };

  /** After a step, the payer is sent to the page of the new state (post/redirect/get). */
  const afterStep = (reply: FastifyReply, invoice: Invoice, merchant: Merchant) =>
    reply
      .status(303)
      .header('location', pageUrl(invoice, pageToken(merchant.secret, invoice.id)))
      .send();

  app.post(
    PROCESS_PATH,
    {
      schema: {
        tags: ['hosted page'],
        summary: 'Open the hosted payment page (form target of active_payment)',
        description:
          'Takes the invoice payload (`invoice_id`, `token`) or the simplified deposit form (`amount`, ' +
          '`reference_id`, `currency`, `service`, `public_key`, `expires`, `signature`: the invoice is ' +
          'created or found first, only for a form the merchant signed) and answers the hosted payment ' +
          'page (HTML).',
        consumes: ['application/x-www-form-urlencoded'],
        body: Form({
          ...InvoiceForm,
          amount: 'simplified form',
          reference_id: 'simplified form',
          currency: 'simplified form',
          service: 'simplified form, a service code or "default"',
          public_key: 'simplified form',
          expires: "simplified form: the form's expiry, Unix seconds",
          signature: "simplified form: the merchant's signature of the form",
          locale:
            'simplified form, optional: the page language (en, uk, ru; not signed); else Accept-Language',
        }),
      },
    },
    async (request, reply) => {
      const body = request.body;
      if (body.invoice_id !== undefined || body.token !== undefined) {
        const found = await authorised(request, reply, body.invoice_id, body.token);
        return found ? current(request, reply, found.invoice, found.merchant) : reply;
      }
      try {
        const { invoice, merchant } = await createInvoice(deps, {
          publicKey: body.public_key ?? '',
          referenceId: body.reference_id ?? '',
          description: '',
          service: body.service || 'default',
          serviceFields: {},
          currency: body.currency ?? '',
          amount: body.amount ?? '',
          locale: supportedLocale(body.locale),
          formSignature: { expires: body.expires, signature: body.signature },
          // A form any page can make a payer's browser post: only the merchant's signed one.
          unsignedAllowed: false,
          clientAddress: request.ip,
        });
        return current(request, reply, invoice, merchant);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        const n = nonce();
        const unsigned = error.errorName === 'bad_form_signature' || error.errorName === 'form_expired';
        return send(
          reply,
          unsigned ? 403 : 400,
          n,
          problemPage(n, localeOf(request), 'cannot_start', error.message),
        );
      }
    },
  );

  app.get(
    `${BASE}/page`,
    {
      schema: {
        tags: ['hosted page'],
        summary: 'The hosted payment page of an invoice in its current state (HTML)',
        querystring: Form(InvoiceForm),
      },
    },
    async (request, reply) => {
      const found = await authorised(request, reply, request.query.invoice_id, request.query.token);
      return found ? current(request, reply, found.invoice, found.merchant) : reply;
    },
  );

  app.post(
    `${BASE}/pay`,
    {
      schema: {
        tags: ['hosted page'],
        summary: 'Submit the card form (HTML; 303 to the page of the new state)',
        consumes: ['application/x-www-form-urlencoded'],
        body: Form({ ...InvoiceForm, card_number: 'card number', expiry: 'MM/YY', cvc: 'security code' }),
      },
    },
    async (request, reply) => {
      const body = request.body;
      const found = await authorised(request, reply, body.invoice_id, body.token);
      if (!found) return reply;
      const { invoice, merchant } = found;
      if (invoice.status !== 'created' || !isCard(invoice)) return afterStep(reply, invoice, merchant);
      const card = checkCardForm(
        { cardNumber: body.card_number ?? '', expiry: body.expiry ?? '', cvc: body.cvc ?? '' },
        deps.now(),
      );
      if (!card.ok) {
        const n = nonce();
        return send(
          reply,
          422,
          n,
          cardPage(context(invoice, merchant, n, localeOf(request, invoice)), {
            errors: card.errors,
            expiry: body.expiry ?? '',
          }),
        );
      }
      const step = await payWithCard(deps, invoice.id, card.number);
      return afterStep(reply, step.invoice, merchant);
    },
  );

  app.post(
    `${BASE}/confirm`,
    {
      schema: {
        tags: ['hosted page'],
        summary: 'Submit the 3-D Secure confirmation code (HTML; 303 to the page of the new state)',
        consumes: ['application/x-www-form-urlencoded'],
        body: Form({ ...InvoiceForm, code: 'the one-time code' }),
      },
    },
    async (request, reply) => {
      const found = await authorised(request, reply, request.body.invoice_id, request.body.token);
      if (!found) return reply;
      const step = await confirmChallenge(deps, found.invoice.id, request.body.code ?? '');
      return afterStep(reply, step.invoice, found.merchant);
    },
  );

  app.post(
    `${BASE}/challenge-cancel`,
    {
      schema: {
        tags: ['hosted page'],
        summary:
          'The payer cancels the 3-D Secure step: back to the card form while card attempts are left (HTML; 303)',
        consumes: ['application/x-www-form-urlencoded'],
        body: Form(InvoiceForm),
      },
    },
    async (request, reply) => {
      const found = await authorised(request, reply, request.body.invoice_id, request.body.token);
      if (!found) return reply;
      const step = await cancelChallenge(deps, found.invoice.id);
      return afterStep(reply, step.invoice, found.merchant);
    },
  );

  app.post(
    `${BASE}/wallet`,
    {
      schema: {
        tags: ['hosted page'],
        summary: 'Approve or decline on the sandbox e-wallet page (HTML; 303)',
        consumes: ['application/x-www-form-urlencoded'],
        body: Form({ ...InvoiceForm, decision: 'approve or decline' }),
      },
    },
    async (request, reply) => {
      const found = await authorised(request, reply, request.body.invoice_id, request.body.token);
      if (!found) return reply;
      if (isCard(found.invoice)) return afterStep(reply, found.invoice, found.merchant);
      const step = await decideWalletPayment(deps, found.invoice.id, request.body.decision === 'approve');
      return afterStep(reply, step.invoice, found.merchant);
    },
  );

  app.post(
    `${BASE}/cancel`,
    {
      schema: {
        tags: ['hosted page'],
        summary: 'The payer cancels: the invoice fails and the page offers the way back (HTML; 303)',
        consumes: ['application/x-www-form-urlencoded'],
        body: Form(InvoiceForm),
      },
    },
    async (request, reply) => {
      const found = await authorised(request, reply, request.body.invoice_id, request.body.token);
      if (!found) return reply;
      const step = await cancelInvoice(deps, found.invoice.id);
      return afterStep(reply, step.invoice, found.merchant);
    },
  );

  app.get(
    `${BASE}/return`,
    {
      schema: {
        tags: ['hosted page'],
        summary: "303 to the merchant's return URL with reference_id, invoice_id and status=success|failed",
        querystring: Form(InvoiceForm),
      },
    },
    async (request, reply) => {
      const found = await authorised(request, reply, request.query.invoice_id, request.query.token);
      if (!found) return reply;
      const { invoice, merchant } = found;
      const outcome = returnOutcome(invoice.status);
      // Not finished yet: back to the page rather than telling the merchant something untrue.
      if (outcome === 'pending') return afterStep(reply, invoice, merchant);
      const target = new URL(merchant.returnUrl);
      target.searchParams.set('reference_id', invoice.referenceId);
      target.searchParams.set('invoice_id', invoice.id);
      target.searchParams.set('status', outcome);
      return reply.status(303).header('location', target.toString()).send();
    },
  );
}
