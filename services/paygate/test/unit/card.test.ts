import { describe, expect, it } from 'vitest';
import { checkExpiry, cvcValid, luhnValid, maskCardNumber } from '../../src/domain/card.js';
import { checkCardForm } from '../../src/domain/card-form.js';

const NOV_2026 = Date.UTC(2026, 10, 25);

describe('card checks', () => {
  it('checks Luhn over the test cards and refuses a one-digit change', () => {
    for (const card of [
      '4242424242424242',
      '4000000000000002',
      '4000000000009995',
      '4000000000003220',
      '4000000000000119',
    ]) {
      expect(luhnValid(card)).toBe(true);
    }
    expect(luhnValid('4242424242424241')).toBe(false);
    expect(luhnValid('42424242')).toBe(false);
    expect(luhnValid('4242x24242424242')).toBe(false);
  });

  it('masks all but the first six and last four digits', () => {
    expect(maskCardNumber('4242424242424242')).toBe('424242******4242');
    expect(maskCardNumber('4111111111111111111')).toBe('411111*********1111');
  });

  it('accepts a card through the end of its expiry month', () => {
    expect(checkExpiry('11/26', NOV_2026)).toEqual({ ok: true, month: 11, year: 2026 });
    expect(checkExpiry('10/26', NOV_2026)).toEqual({ ok: false, reason: 'expired' });
    expect(checkExpiry('12 / 2030', NOV_2026)).toEqual({ ok: true, month: 12, year: 2030 });
    expect(checkExpiry('1230', NOV_2026)).toEqual({ ok: true, month: 12, year: 2030 });
    expect(checkExpiry('13/30', NOV_2026)).toEqual({ ok: false, reason: 'malformed' });
    expect(checkExpiry('soon', NOV_2026)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('wants a 3 or 4 digit security code', () => {
    expect(cvcValid('123')).toBe(true);
    expect(cvcValid('1234')).toBe(true);
    expect(cvcValid('12')).toBe(false);
    expect(cvcValid('12a')).toBe(false);
  });

  it("names one problem per wrong field of the form (the page words it in the payer's language)", () => {
    const result = checkCardForm({ cardNumber: '4242 4242 4242 4241', expiry: '01/20', cvc: '1' }, NOV_2026);
    expect(result).toEqual({
      ok: false,
      errors: {
        card_number: 'card_number_luhn',
        expiry: 'expiry_past',
        cvc: 'cvc_malformed',
      },
    });
    expect(checkCardForm({ cardNumber: '', expiry: '', cvc: '' }, NOV_2026)).toMatchObject({
      ok: false,
      errors: { card_number: 'card_number_missing', expiry: 'expiry_missing' },
    });
    expect(
      checkCardForm({ cardNumber: '4242-4242-4242-4242', expiry: '12/30', cvc: '123' }, NOV_2026),
    ).toEqual({
      ok: true,
      number: '4242424242424242',
      expMonth: 12,
      expYear: 2030,
    });
  });
});
