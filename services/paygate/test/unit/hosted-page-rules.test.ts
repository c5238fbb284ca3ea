import { describe, expect, it } from 'vitest';
import { afterFailedAttempt, attemptsLeft } from '../../src/domain/card-attempts.js';
import { cardBrand, groupCardNumber } from '../../src/domain/card-brand.js';
import { formatMoney, fromAcceptLanguage, pageLocale, supportedLocale } from '../../src/hpp/locale.js';
import { MESSAGES } from '../../src/hpp/messages.js';

describe('card attempts on one invoice', () => {
  it('keeps the invoice open until the limit, then fails it', () => {
    expect(afterFailedAttempt(0, 3)).toEqual({ kind: 'retry', attempts: 1, left: 2 });
    expect(afterFailedAttempt(1, 3)).toEqual({ kind: 'retry', attempts: 2, left: 1 });
    expect(afterFailedAttempt(2, 3)).toEqual({ kind: 'fail', attempts: 3 });
    expect(afterFailedAttempt(0, 1)).toEqual({ kind: 'fail', attempts: 1 });
    expect(attemptsLeft(5, 3)).toBe(0);
  });
});

describe('card brand and grouping', () => {
  it('knows the brand from the first digits and groups as printed', () => {
    expect(cardBrand('4')).toBe('visa');
    expect(cardBrand('5500')).toBe('mastercard');
    expect(cardBrand('2221')).toBe('mastercard');
    expect(cardBrand('2200')).toBe('mir');
    expect(cardBrand('37')).toBe('amex');
    expect(cardBrand('3')).toBeUndefined();
    expect(cardBrand('')).toBeUndefined();
    expect(groupCardNumber('4242424242424242')).toBe('4242 4242 4242 4242');
    expect(groupCardNumber('378282246310005')).toBe('3782 822463 10005');
    expect(groupCardNumber('42424')).toBe('4242 4');
  });
});

describe("the payer's language", () => {
  it("takes the merchant's locale first, then the browser's best supported language, then English", () => {
    expect(supportedLocale('uk-UA')).toBe('uk');
    expect(supportedLocale('ru_RU')).toBe('ru');
    expect(supportedLocale('de')).toBeUndefined();
    expect(fromAcceptLanguage('de-DE,de;q=0.9,ru;q=0.8,uk;q=0.7')).toBe('ru');
    expect(fromAcceptLanguage('en;q=0.5, uk-UA')).toBe('uk');
    expect(fromAcceptLanguage('uk;q=0, en')).toBe('en');
    expect(fromAcceptLanguage('fr')).toBeUndefined();
    expect(pageLocale('ru', 'uk')).toBe('ru');
    expect(pageLocale(null, 'uk-UA,uk;q=0.9')).toBe('uk');
    expect(pageLocale(null, undefined)).toBe('en');
  });

  it('formats amounts for the locale from their exact decimal text', () => {
    const plain = (s: string) => s.replace(/[\u00a0\u202f]/g, ' ');
    expect(plain(formatMoney('1507.50', 'UAH', 'en'))).toBe('UAH 1,507.50');
    expect(plain(formatMoney('1507.50', 'UAH', 'uk'))).toBe('1 507,50 ₴');
    expect(plain(formatMoney('1507.50', 'USD', 'ru'))).toBe('1 507,50 $');
    // More digits than a double holds: the text is formatted as it is.
    expect(formatMoney('90071992547409931.05', 'USD', 'en')).toBe('$90,071,992,547,409,931.05');
  });

  it('has every text in every language', () => {
    const keys = (o: object) => Object.keys(o).sort();
    for (const locale of ['uk', 'ru'] as const) {
      expect(keys(MESSAGES[locale])).toEqual(keys(MESSAGES.en));
      expect(keys(MESSAGES[locale].cardProblems)).toEqual(keys(MESSAGES.en.cardProblems));
      expect(keys(MESSAGES[locale].failures)).toEqual(keys(MESSAGES.en.failures));
      expect(keys(MESSAGES[locale].attemptFailures)).toEqual(keys(MESSAGES.en.attemptFailures));
    }
  });
});
