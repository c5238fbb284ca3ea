import { checkExpiry, cvcValid, luhnValid, normaliseCardNumber } from './card.js';

/** What the payer typed on the hosted page. */
export interface CardForm {
  readonly cardNumber: string;
  readonly expiry: string;
  readonly cvc: string;
}

/** What is wrong with one field; the page words it in the payer's language (src/hpp/messages.ts). */
export type CardFormProblem =
  | 'card_number_missing'
  | 'card_number_not_digits'
  | 'card_number_length'
  | 'card_number_luhn'
  | 'expiry_missing'
  | 'expiry_malformed'
  | 'expiry_past'
  | 'cvc_missing'
  | 'cvc_malformed';

export type CardFormErrors = Partial<Record<'card_number' | 'expiry' | 'cvc', CardFormProblem>>;

export type CardFormResult =
  | { readonly ok: true; readonly number: string; readonly expMonth: number; readonly expYear: number }
  | { readonly ok: false; readonly errors: CardFormErrors };

/**
 * Checks the card form before anything reaches the processor, with one problem per field (shown
 * next to the field on the hosted page).
 */
export function checkCardForm(form: CardForm, nowMs: number): CardFormResult {
  const errors: CardFormErrors = {};
  const number = normaliseCardNumber(form.cardNumber);
  if (number === '') errors.card_number = 'card_number_missing';
  else if (!/^\d+$/.test(number)) errors.card_number = 'card_number_not_digits';
  else if (number.length < 12 || number.length > 19) errors.card_number = 'card_number_length';
  else if (!luhnValid(number)) errors.card_number = 'card_number_luhn';
  const expiry = checkExpiry(form.expiry, nowMs);
  if (form.expiry.trim() === '') errors.expiry = 'expiry_missing';
  else if (!expiry.ok && expiry.reason === 'malformed') errors.expiry = 'expiry_malformed';
  else if (!expiry.ok) errors.expiry = 'expiry_past';
  if (form.cvc.trim() === '') errors.cvc = 'cvc_missing';
  else if (!cvcValid(form.cvc)) errors.cvc = 'cvc_malformed';
  if (Object.keys(errors).length > 0 || !expiry.ok) return { ok: false, errors };
  return { ok: true, number, expMonth: expiry.month, expYear: expiry.year };
}
