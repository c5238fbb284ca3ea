/**
 * The payer's language on the hosted page: the invoice's `locale` when the merchant passed one, else
 * the browser's `Accept-Language`, else English. Pure.
 */
export const LOCALES = ['en', 'uk', 'ru'] as const;
export type Locale = (typeof LOCALES)[number];

/** The locale a merchant may pass (`uk`, `uk-UA`, `ru_RU`, ...), as stored; undefined if not ours. */
export function supportedLocale(tag: string | null | undefined): Locale | undefined {
  const primary = /^([A-Za-z]{2,3})(?:[-_][A-Za-z0-9]{1,8})*$/.exec(tag?.trim() ?? '')?.[1]?.toLowerCase();
  return LOCALES.find((locale) => locale === primary);
}

/** The language of the highest `q` in an Accept-Language header that we have (RFC 9110 12.5.4). */
export function fromAcceptLanguage(header: string | undefined): Locale | undefined {
  if (!header) return undefined;
  const ranges = header
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/.exec(p)?.[1]).find(Boolean);
      return { locale: supportedLocale(tag), q: q === undefined ? 1 : Number(q), index };
    })
    .filter((range) => range.locale !== undefined && range.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  return ranges[0]?.locale;
}

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
