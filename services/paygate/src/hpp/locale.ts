/**
 * The payer's language on the hosted page: the invoice's `locale` when the merchant passed one, else
 * the browser's `Accept-Language`, else English. Pure.
 */
import { fromAcceptLanguage, type Locale, supportedLocale } from '@platform/checkout-look/payer-language';

export {
  fromAcceptLanguage,
  LOCALES,
  type Locale,
  supportedLocale,
} from '@platform/checkout-look/payer-language';

export function pageLocale(
  invoiceLocale: string | null | undefined,
  acceptLanguage: string | undefined,
): Locale {
  return supportedLocale(invoiceLocale) ?? fromAcceptLanguage(acceptLanguage) ?? 'en';
}

/** The BCP 47 tag amounts are formatted with (a region gives the usual separators). */
const NUMBER_LOCALES: Readonly<Record<Locale, string>> = { en: 'en-US', uk: 'uk-UA', ru: 'ru-RU' };

/**
 * An amount for the payer's language: `UAH 1,507.50`, `1 507,50 ₴`. The decimal text is formatted
 * as it is (Intl reads a numeric string exactly, never through a float).
 */
export function formatMoney(amount: string, currency: string, locale: Locale): string {
  const decimals = amount.includes('.') ? (amount.split('.')[1]?.length ?? 0) : 0;
  return new Intl.NumberFormat(NUMBER_LOCALES[locale], {
    style: 'currency',
    currency,
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
  }).format(amount as Intl.StringNumericLiteral);
}
