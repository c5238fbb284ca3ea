import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The merchant's signature of the invoice form it hands its payer (README "Signed invoice forms").
 *
 * The public key names the merchant but is public (the exchange shows it in every account object),
 * and reference ids are often guessable (sequential deposit ids). So creating or repeating an
 * invoice, which answers the hosted page's token, needs proof that the merchant issued this form:
 * `signature` = hex(HMAC-SHA256(merchant secret, canonical)) where canonical is the JSON array
 * `["paygate-invoice-form/v1", public_key, reference_id, CURRENCY, amount, service, expires]`:
 * `amount` the plain decimal with no trailing zeros ("150.5", "500"), `service` the resolved service
 * code (never `default`), `expires` Unix seconds as a decimal string. A JSON array has one spelling
 * for each list of strings, so no two forms share a canonical text.
 */
export interface InvoiceForm {
  readonly publicKey: string;
  readonly referenceId: string;
  readonly currency: string;
  /** Plain decimal text, e.g. "150.50". */
  readonly amount: string;
  readonly service: string;
  /** Unix seconds after which the form is refused. */
  readonly expires: number;
}

/** "150.50" -> "150.5", "500.00" -> "500", "0.10" -> "0.1": one text per value. */
export function canonicalAmount(decimal: string): string {
  if (!decimal.includes('.')) return decimal;
  return decimal.replace(/0+$/, '').replace(/\.$/, '');
}

export function canonicalInvoiceForm(form: InvoiceForm): string {
  return JSON.stringify([
    'paygate-invoice-form/v1',
    form.publicKey,
    form.referenceId,
    form.currency.toUpperCase(),
    canonicalAmount(form.amount),
    form.service,
    String(form.expires),
  ]);
}

export function signInvoiceForm(secret: string, form: InvoiceForm): string {
  return createHmac('sha256', secret).update(canonicalInvoiceForm(form)).digest('hex');
}

export type InvoiceFormCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: 'missing' | 'malformed' | 'expired' | 'mismatch' };

/**
 * A form that carries neither `signature` nor `expires`: the spec's own body (README "Unsigned
 * invoices"), as opposed to a signed form with a part missing or wrong (`malformed`, `mismatch`).
 */
export function isUnsignedForm(given: { expires: unknown; signature: unknown }): boolean {
  return given.signature === undefined && given.expires === undefined;
}

/** Checks a form's signature (constant time) and that it has not expired at `nowMs`. */
export function checkInvoiceForm(
  secret: string,
  form: Omit<InvoiceForm, 'expires'>,
  given: { expires: unknown; signature: unknown },
  nowMs: number,
): InvoiceFormCheck {
  if (isUnsignedForm(given)) return { ok: false, reason: 'missing' };
  const expiresText = typeof given.expires === 'number' ? String(given.expires) : given.expires;
  if (
    typeof expiresText !== 'string' ||
    !/^[1-9]\d{0,11}$/.test(expiresText) ||
    typeof given.signature !== 'string' ||
    !/^[0-9a-f]{64}$/.test(given.signature)
  ) {
    return { ok: false, reason: 'malformed' };
  }
  const expires = Number(expiresText);
  const expected = Buffer.from(signInvoiceForm(secret, { ...form, expires }), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(given.signature, 'hex')))
    return { ok: false, reason: 'mismatch' };
  // Checked after the signature, so an expired answer never tells a forger anything.
  if (expires * 1000 <= nowMs) return { ok: false, reason: 'expired' };
  return { ok: true };
}
