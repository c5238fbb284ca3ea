/** Card checks done before anything reaches the processor. Pure: the clock is an argument. */

/** Removes the spaces and dashes people type inside a card number. */
export function normaliseCardNumber(input: string): string {
  return input.replace(/[\s-]/g, '');
}

/** The Luhn (mod 10) checksum over a string of digits; false for anything else. */
export function luhnValid(digits: string): boolean {
  if (!/^\d{12,19}$/.test(digits)) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let digit = digits.charCodeAt(i) - 48;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return sum % 10 === 0;
}

/** `411111******1111`: the first six and last four digits, the rest masked (PCI DSS display rule). */
export function maskCardNumber(digits: string): string {
  if (digits.length < 12) return '*'.repeat(digits.length);
  return `${digits.slice(0, 6)}${'*'.repeat(digits.length - 10)}${digits.slice(-4)}`;
}

export type ExpiryCheck =
  | { readonly ok: true; readonly month: number; readonly year: number }
  | { readonly ok: false; readonly reason: 'malformed' | 'expired' };

/**
 * Reads an expiry as `MM/YY`, `MM / YY`, `MM/YYYY` or `MMYY`; a card is valid through the last day
 * of its expiry month (UTC).
 */
export function checkExpiry(input: string, nowMs: number): ExpiryCheck {
  const match = /^(\d{1,2})\s*\/?\s*(\d{2}|\d{4})$/.exec(input.trim());
  if (!match) return { ok: false, reason: 'malformed' };
  const month = Number(match[1]);
  const rawYear = match[2] ?? '';
  const year = rawYear.length === 2 ? 2000 + Number(rawYear) : Number(rawYear);
  if (month < 1 || month > 12) return { ok: false, reason: 'malformed' };
  const now = new Date(nowMs);
  const current = now.getUTCFullYear() * 12 + now.getUTCMonth();
  if (year * 12 + (month - 1) < current) return { ok: false, reason: 'expired' };
  return { ok: true, month, year };
}

/** Three digits (four for cards that use them). */
export function cvcValid(input: string): boolean {
  return /^\d{3,4}$/.test(input.trim());
}
