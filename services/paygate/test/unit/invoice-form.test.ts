import { seedName, testSeeds } from '@platform/testkit/seeds';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalAmount,
  checkInvoiceForm,
  type InvoiceForm,
  signInvoiceForm,
} from '../../src/domain/invoice-form.js';

const SECRET = 'merchant-secret-for-tests';
const NOW = 1_800_000_000_000;
const form: InvoiceForm = {
  publicKey: 'pk_test_exchange_uah',
  referenceId: '42',
  currency: 'UAH',
  amount: '150.50',
  service: 'payment_card_uah_hpp',
  expires: NOW / 1000 + 600,
};
const { expires, ...unsignedForm } = form;

describe('signed invoice forms', () => {
  it('accepts the form signed with the merchant secret, the expiry as a number or a string', () => {
    const signature = signInvoiceForm(SECRET, form);
    expect(checkInvoiceForm(SECRET, unsignedForm, { expires, signature }, NOW)).toEqual({ ok: true });
    expect(checkInvoiceForm(SECRET, unsignedForm, { expires: String(expires), signature }, NOW)).toEqual({
      ok: true,
    });
  });

  it('reads amounts by value: "150.50", "150.5" and "150.500" sign alike; "150" and "1500" differ', () => {
    expect(canonicalAmount('150.50')).toBe('150.5');
    expect(canonicalAmount('500.00')).toBe('500');
    expect(canonicalAmount('500')).toBe('500');
    expect(canonicalAmount('1500')).toBe('1500');
    expect(canonicalAmount('0.10')).toBe('0.1');
    const signature = signInvoiceForm(SECRET, { ...form, amount: '150.5' });
    expect(checkInvoiceForm(SECRET, unsignedForm, { expires, signature }, NOW).ok).toBe(true);
  });

  it('names why a form is refused: missing, malformed, mismatch, expired', () => {
    const signature = signInvoiceForm(SECRET, form);
    const check = (given: { expires: unknown; signature: unknown }, now = NOW) =>
      checkInvoiceForm(SECRET, unsignedForm, given, now);
    expect(check({ expires: undefined, signature: undefined })).toEqual({ ok: false, reason: 'missing' });
    expect(check({ expires, signature: undefined })).toEqual({ ok: false, reason: 'malformed' });
    expect(check({ expires: '0x10', signature })).toEqual({ ok: false, reason: 'malformed' });
    expect(check({ expires: -1, signature })).toEqual({ ok: false, reason: 'malformed' });
    expect(check({ expires, signature: signature.toUpperCase() })).toEqual({
      ok: false,
      reason: 'malformed',
    });
    expect(check({ expires: expires + 1, signature })).toEqual({ ok: false, reason: 'mismatch' });
    expect(checkInvoiceForm('another-secret', unsignedForm, { expires, signature }, NOW)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    expect(check({ expires, signature }, expires * 1000)).toEqual({ ok: false, reason: 'expired' });
  });

  for (const seed of testSeeds([2801, 2802])) {
    it(`refuses any change of any signed part, ${seedName(seed)}`, () => {
      const text = fc.string({ minLength: 1, maxLength: 12 });
      fc.assert(
        fc.property(
          fc.record({
            publicKey: text,
            referenceId: text,
            currency: fc.constantFrom('UAH', 'USD', 'RUB'),
            amount: fc.integer({ min: 1, max: 10_000_000 }).map((n) => `${Math.floor(n / 100)}.${n % 100}`),
            service: text,
          }),
          fc.constantFrom('publicKey', 'referenceId', 'currency', 'amount', 'service'),
          text,
          (signedPart, changed, replacement) => {
            const signature = signInvoiceForm(SECRET, { ...signedPart, expires });
            const altered = { ...signedPart, [changed]: replacement };
            const same =
              changed === 'amount'
                ? canonicalAmount(replacement) === canonicalAmount(signedPart.amount)
                : changed === 'currency'
                  ? replacement.toUpperCase() === signedPart.currency
                  : replacement === signedPart[changed];
            const result = checkInvoiceForm(SECRET, altered, { expires, signature }, NOW);
            expect(result.ok).toBe(same);
          },
        ),
        { seed, numRuns: 300 },
      );
    });
  }
});
