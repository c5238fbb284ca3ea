import { signInvoiceForm } from '../domain/invoice-form.js';

export interface TryInvoice {
  readonly id: string;
  readonly total: string;
  readonly currency: string;
  /** The hosted page of the invoice, to open in a browser. */
  readonly pageUrl: string;
}

/**
 * Creates an invoice of the bundled `try_it` merchant over the public API, signed as that merchant
 * would sign its form (`npm run try-invoice`; the merchant's callbacks are acknowledged by the gateway
 * itself, so the exchange never sees the reference).
 */
export async function createTryInvoice(options: {
  readonly gatewayUrl: string;
  readonly secret: string;
  readonly amount: string;
  readonly currency: string;
  readonly locale?: string | undefined;
  readonly now?: number;
}): Promise<TryInvoice> {
  const base = options.gatewayUrl.replace(/\/+$/, '');
  const code = options.currency.toUpperCase();
  const now = options.now ?? Date.now();
  const form = {
    publicKey: `pk_test_try_it_${code.toLowerCase()}`,
    referenceId: `try-${now}`,
    currency: code,
    amount: options.amount,
    service: `payment_card_${code.toLowerCase()}_hpp`,
    expires: Math.floor(now / 1000) + 600,
  };
  const response = await fetch(`${base}/public-api/payment-invoices`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      public_key: form.publicKey,
      reference_id: form.referenceId,
      description: 'Try-it invoice',
      service: form.service,
      currency: code,
      amount: options.amount,
      expires: form.expires,
      signature: signInvoiceForm(options.secret, form),
      ...(options.locale ? { locale: options.locale } : {}),
    }),
  });
  const answer = (await response.json()) as {
    data?: {
      id: string;
      total: string;
      currency: string;
      active_payment: { payload: { name: string; value: string }[] };
    };
    error?: { message: string };
  };
  if (!answer.data) throw new Error(answer.error?.message ?? `HTTP ${response.status}`);
  const fields = new URLSearchParams(
    answer.data.active_payment.payload.map((p): [string, string] => [p.name, p.value]),
  );
  return {
    id: answer.data.id,
    total: answer.data.total,
    currency: answer.data.currency,
    pageUrl: `${base}/public-api/payment-invoices/page?${fields}`,
  };
}
