import { checkExpiry, cvcValid, luhnValid, normaliseCardNumber } from './card.js';

/** What the payer typed on the hosted page. */
export interface CardForm {
  readonly cardNumber: string;
  readonly expiry: string;
  readonly cvc: string;
}

export type CardFormErrors = Partial<Record<'card_number' | 'expiry' | 'cvc', string>>;

export type CardFormResult =
  | { readonly ok: true; readonly number: string; readonly expMonth: number; readonly expYear: number }
  | { readonly ok: false; readonly errors: CardFormErrors };

/**
 * Checks the card form before anything reaches the processor, with one clear message per field
 * (shown next to the field on the hosted page).
 */
export function checkCardForm(form: CardForm, nowMs: number): CardFormResult {
  const errors: CardFormErrors = {};
  const number = normaliseCardNumber(form.cardNumber);
  if (number === '') errors.card_number = 'Enter the card number.';
  else if (!/^\d+$/.test(number)) errors.card_number = 'The card number may contain digits only.';
  else if (number.length < 12 || number.length > 19)
    errors.card_number = 'The card number must have 12 to 19 digits.';
  else if (!luhnValid(number)) errors.card_number = 'This card number is not valid. Check it for typos.';
  const expiry = checkExpiry(form.expiry, nowMs);
  if (form.expiry.trim() === '') errors.expiry = 'Enter the expiry date as MM/YY.';
  else if (!expiry.ok && expiry.reason === 'malformed')
    errors.expiry = 'Enter the expiry date as MM/YY, e.g. 12/30.';
  else if (!expiry.ok) errors.expiry = 'This card has expired.';
  if (form.cvc.trim() === '') errors.cvc = 'Enter the security code (CVC).';
  else if (!cvcValid(form.cvc)) errors.cvc = 'The security code is the 3 digits on the back of the card.';
  if (Object.keys(errors).length > 0 || !expiry.ok) return { ok: false, errors };
  return { ok: true, number, expMonth: expiry.month, expYear: expiry.year };
}
