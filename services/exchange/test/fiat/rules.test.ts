import { describe, expect, it } from 'vitest';
import type { GatewayService } from '../../src/fiat/gateway-types.js';
import {
  checkFields,
  checkLimits,
  feeOnTop,
  feeRule,
  gatewayAmount,
  maskValue,
  splitWithdrawal,
} from '../../src/fiat/rules.js';

const card: GatewayService = {
  code: 'payment_card_uah',
  method: 'payment_card',
  currency: 'UAH',
  fields: [
    {
      key: 'card_number',
      type: 'string',
      label: { en: 'Card number' },
      hint: { en: 'Enter card number' },
      regexp: '^\\d{12,19}$',
      required: true,
      position: 0,
    },
    { key: 'holder', type: 'string', required: false, position: 1 },
  ],
  amount_min: 100,
  amount_max: 250000,
  fee: { rate: 1, fixed: 0, min: 0, max: 0 },
};

const rule = (fee: GatewayService['fee']) => {
  const built = feeRule(fee, 2);
  if (!built) throw new Error('bad fee');
  return built;
};

describe('fiat rules', () => {
  it('reads gateway numbers exactly, rounding half-up to the currency decimals', () => {
    expect(gatewayAmount(100, 2)).toBe(10000n);
    expect(gatewayAmount(0.1, 2)).toBe(10n);
    expect(gatewayAmount('7.505', 2)).toBe(751n);
    expect(gatewayAmount(1e-7, 2)).toBe(0n);
    expect(gatewayAmount(-1, 2)).toBeUndefined();
    expect(gatewayAmount('abc', 2)).toBeUndefined();
  });

  it('computes the withdrawall arithmetic of the reference page (1000 UAH at 1 %)', () => {
    const onePercent = rule(card.fee);
    expect(splitWithdrawal(100000n, onePercent, false)).toEqual({
      received: 100000n,
      fee: 1000n,
      total: 101000n,
    });
    expect(splitWithdrawal(100000n, onePercent, true)).toEqual({
      received: 99010n,
      fee: 990n,
      total: 100000n,
    });
  });

  it('keeps received + fee = amount with a fixed part and clamps to non-zero min and max', () => {
    const mixed = rule({ rate: 1.5, fixed: 5, min: 10, max: 50 });
    expect(feeOnTop(10000n, mixed)).toBe(1000n); // 1.5 + 5 = 6.50 -> min 10
    expect(feeOnTop(1000000n, mixed)).toBe(5000n); // 150 + 5 -> max 50
    expect(feeOnTop(200000n, mixed)).toBe(3500n); // 30 + 5
    for (const amount of [1500n, 10001n, 99999n, 200000n, 7777777n]) {
      const split = splitWithdrawal(amount, mixed, true);
      expect(split).toBeDefined();
      expect(split!.received + split!.fee).toBe(amount);
      expect(split!.total).toBe(amount);
    }
    expect(splitWithdrawal(1000n, mixed, true)).toBeUndefined(); // 10.00 gross, fee 10 leaves nothing
    expect(splitWithdrawal(0n, mixed, false)).toBeUndefined();
  });

  it("checks a service's limits", () => {
    expect(checkLimits(10000n, card, 2)).toEqual({ ok: true });
    expect(checkLimits(9999n, card, 2)).toMatchObject({ ok: false, problem: 'below_min' });
    expect(checkLimits(25000001n, card, 2)).toMatchObject({ ok: false, problem: 'above_max' });
    expect(checkLimits(25000001n, { ...card, amount_max: 0 }, 2)).toEqual({ ok: true });
  });

  it("checks fields against the service's regexps, required flags and keys", () => {
    expect(checkFields({ card_number: ' 4242424242424242 ' }, card.fields)).toEqual({
      ok: true,
      fields: { card_number: '4242424242424242' },
    });
    expect(checkFields({}, card.fields)).toMatchObject({
      ok: false,
      field: 'card_number',
      problem: 'missing',
    });
    expect(checkFields({ card_number: '4242-4242' }, card.fields)).toMatchObject({
      ok: false,
      field: 'card_number',
      problem: 'pattern',
    });
    expect(checkFields({ card_number: '4242424242424242', iban: 'x' }, card.fields)).toMatchObject({
      ok: false,
      field: 'iban',
      problem: 'unknown',
    });
  });

  it('masks card numbers and other destinations', () => {
    expect(maskValue('4111111111111111')).toBe('411111******1111');
    expect(maskValue('U123456789')).toBe('U1******89');
    expect(maskValue('abc')).toBe('***');
  });
});

describe('card numbers', () => {
  it('refuses a card number failing the Luhn check of a payment_card service', async () => {
    const { checkCardNumbers, luhnValid } = await import('../../src/fiat/rules.js');
    expect(luhnValid('4242424242424242')).toBe(true);
    expect(luhnValid('4000000000000119')).toBe(true);
    expect(luhnValid('4242424242424241')).toBe(false);
    expect(checkCardNumbers({ card_number: '4242424242424241' }, card)).toMatchObject({
      ok: false,
      field: 'card_number',
    });
    expect(checkCardNumbers({ card_number: '4242424242424242' }, card)).toMatchObject({ ok: true });
  });
});
