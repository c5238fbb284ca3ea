/**
 * The card's brand from its first digits (the issuer identification number ranges the networks
 * publish), and the grouping the brand prints on the card. Pure; the hosted page's script mirrors it
 * (src/hpp/script.ts) so the brand shows while the payer types.
 */
export type CardBrand = 'visa' | 'mastercard' | 'amex' | 'mir' | 'maestro' | 'discover' | 'jcb' | 'unionpay';

/** How the brand is written on the page (the same in every language). */
export const BRAND_NAMES: Readonly<Record<CardBrand, string>> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  amex: 'American Express',
  mir: 'Mir',
  maestro: 'Maestro',
  discover: 'Discover',
  jcb: 'JCB',
  unionpay: 'UnionPay',
};

function prefixIn(digits: string, length: number, from: number, to: number): boolean {
  if (digits.length < length) return false;
  const prefix = Number(digits.slice(0, length));
  return prefix >= from && prefix <= to;
}

/** The brand of a card number (digits only, any length typed so far); undefined when not known yet. */
export function cardBrand(digits: string): CardBrand | undefined {
  if (!/^\d+$/.test(digits)) return undefined;
  if (digits.startsWith('4')) return 'visa';
  if (prefixIn(digits, 2, 34, 34) || prefixIn(digits, 2, 37, 37)) return 'amex';
  if (prefixIn(digits, 4, 2200, 2204)) return 'mir';
  if (prefixIn(digits, 2, 51, 55) || prefixIn(digits, 4, 2221, 2720)) return 'mastercard';
  if (digits.startsWith('6011') || digits.startsWith('65') || prefixIn(digits, 3, 644, 649))
    return 'discover';
  if (prefixIn(digits, 4, 3528, 3589)) return 'jcb';
  if (digits.startsWith('62')) return 'unionpay';
  if (/^(50|5[6-9]|6[0-9])/.test(digits)) return 'maestro';
  return undefined;
}

/** Groups as printed on the card: American Express 4-6-5, every other brand in fours. */
export function groupCardNumber(digits: string): string {
  if (cardBrand(digits) === 'amex') {
    return [digits.slice(0, 4), digits.slice(4, 10), digits.slice(10, 15)].filter(Boolean).join(' ');
  }
  return digits.replace(/(\d{4})(?=\d)/g, '$1 ');
}
