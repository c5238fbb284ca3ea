import { createHmac } from 'node:crypto';
import { SANDBOX_SECRET } from './catalog.js';

/**
 * Signs an invoice form as the merchant does (README "Signed invoice forms"), built here from the
 * README's text, not with the gateway's code: HMAC-SHA256 under the merchant secret of the JSON array
 * ["paygate-invoice-form/v1", public_key, reference_id, CURRENCY, amount without trailing zeros,
 * service code, expires].
 */
export function formSignature(
  form: {
    public_key: string;
    reference_id: string;
    currency: string;
    amount: string | number;
    service: string;
  },
  options: { secret?: string; expires?: number } = {},
): { expires: number; signature: string } {
  const expires = options.expires ?? Math.floor(Date.now() / 1000) + 600;
  const currency = form.currency.toUpperCase();
  let amount = String(form.amount);
  if (amount.includes('.')) amount = amount.replace(/0+$/, '').replace(/\.$/, '');
  // `default` is the currency's card service: the merchant signs the service it resolved.
  const service = form.service === 'default' ? `payment_card_${currency.toLowerCase()}_hpp` : form.service;
  const canonical = JSON.stringify([
    'paygate-invoice-form/v1',
    form.public_key,
    form.reference_id,
    currency,
    amount,
    service,
    String(expires),
  ]);
  return {
    expires,
    signature: createHmac('sha256', options.secret ?? SANDBOX_SECRET)
      .update(canonical)
      .digest('hex'),
  };
}

/** The invoice body with its signature added (JSON: `expires` a number). */
export function signed<
  T extends {
    public_key: string;
    reference_id: string;
    currency: string;
    amount: string | number;
    service: string;
  },
>(form: T, options: { secret?: string; expires?: number } = {}): T & { expires: number; signature: string } {
  return { ...form, ...formSignature(form, options) };
}

/** The simplified deposit form with its signature added (form fields: every value a string). */
export function signedFormFields(
  form: { public_key: string; reference_id: string; currency: string; amount: string; service: string },
  options: { secret?: string; expires?: number } = {},
): Record<string, string> {
  const { expires, signature } = formSignature(form, options);
  return { ...form, expires: String(expires), signature };
}

/** The exchange merchant's signed card invoice of `amount` UAH under `reference`. */
export function exchangeInvoice(reference: string, amount: string | number = '500') {
  return signed({
    public_key: 'pk_test_exchange_uah',
    reference_id: reference,
    service: 'payment_card_uah_hpp',
    currency: 'UAH',
    amount,
  });
}

/** POSTs the exchange merchant's signed card invoice of `amount` UAH under `reference` to the gateway at `baseUrl`. */
export function postInvoice(
  baseUrl: string,
  reference: string,
  amount: string | number = '500',
): Promise<Response> {
  return fetch(`${baseUrl}/public-api/payment-invoices`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(exchangeInvoice(reference, amount)),
  });
}
