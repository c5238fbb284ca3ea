import { createHmac } from 'node:crypto';

/**
 * The signature the gateway asks for on an invoice form (services/paygate README "Signed invoice
 * forms"): the gateway answers an invoice, and its hosted page's token, only for a form we signed, so
 * a third party with our public key and a guessed deposit id gets nothing. hex(HMAC-SHA256(merchant
 * secret, JSON text of ["paygate-invoice-form/v1", public_key, reference_id, CURRENCY, amount without
 * trailing zeros, service code, expires as a decimal string])).
 */
export interface InvoiceForm {
  readonly publicKey: string;
  readonly referenceId: string;
  readonly currency: string;
  /** Plain decimal text, e.g. "150.50". */
  readonly amount: string;
  /** The service code (never `default`). */
  readonly service: string;
  /** Unix seconds after which the gateway refuses the form. */
  readonly expires: number;
}

function canonicalAmount(decimal: string): string {
  return decimal.includes('.') ? decimal.replace(/0+$/, '').replace(/\.$/, '') : decimal;
}

export function signInvoiceForm(secret: string, form: InvoiceForm): string {
  const canonical = JSON.stringify([
    'paygate-invoice-form/v1',
    form.publicKey,
    form.referenceId,
    form.currency.toUpperCase(),
    canonicalAmount(form.amount),
    form.service,
    String(form.expires),
  ]);
  return createHmac('sha256', secret).update(canonical).digest('hex');
}

/** The expiry and signature of a form issued at `nowMs`, valid for `ttlS` seconds. */
export function invoiceFormSignature(
  secret: string,
  form: Omit<InvoiceForm, 'expires'>,
  nowMs: number,
  ttlS: number,
): { expires: number; signature: string } {
  const expires = Math.floor(nowMs / 1000) + ttlS;
  return { expires, signature: signInvoiceForm(secret, { ...form, expires }) };
}
