/**
 * The payer's language: the languages the payer's pages speak (the gateway's hosted page and the
 * exchange's pages around it) and how a language tag or an `Accept-Language` header maps to one.
 * The gateway opens its page in it; the exchange reads it off the payer's deposit request and passes
 * it to the gateway. Pure.
 */
export const LOCALES = ['en', 'uk', 'ru'] as const;
export type Locale = (typeof LOCALES)[number];

/** The locale of a tag (`uk`, `uk-UA`, `ru_RU`, ...); undefined when it is none of ours. */
export function supportedLocale(tag: string | null | undefined): Locale | undefined {
  const primary = /^([A-Za-z]{2,3})(?:[-_][A-Za-z0-9]{1,8})*$/.exec(tag?.trim() ?? '')?.[1]?.toLowerCase();
  return LOCALES.find((locale) => locale === primary);
}

/**
 * The language of the highest `q` in an Accept-Language header that we have, q=0 meaning "not this
 * one" (RFC 9110 12.5.4); undefined when none is ours.
 */
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
