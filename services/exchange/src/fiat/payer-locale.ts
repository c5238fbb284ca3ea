/**
 * The payer's language for the gateway's hosted page (`uk`, `ru` or `en`, the languages it speaks),
 * from the `Accept-Language` of the payer's deposit request: the gateway's page opens in it even when
 * the form is later submitted by something that sends no such header (an app's web view, a server).
 * The v3 deposit route has no field for it in the spec. Pure.
 *
 * The same reading as the gateway's `fromAcceptLanguage` (services/paygate/src/hpp/locale.ts): the
 * highest `q` among the languages the page has, q=0 meaning "not this one" (RFC 9110 12.5.4).
 * Kept here rather than in a package: the exchange may not import the gateway, and this is its only
 * other reader.
 */
export const PAYER_LOCALES = ['uk', 'ru', 'en'] as const;
export type PayerLocale = (typeof PAYER_LOCALES)[number];

function supported(tag: string): PayerLocale | undefined {
  const primary = /^([A-Za-z]{2,3})(?:[-_][A-Za-z0-9]{1,8})*$/.exec(tag.trim())?.[1]?.toLowerCase();
  return PAYER_LOCALES.find((locale) => locale === primary);
}

/** The page language to ask the gateway for, or undefined (the gateway then follows the browser). */
export function payerLocale(acceptLanguage: string | undefined): PayerLocale | undefined {
  if (!acceptLanguage) return undefined;
  const ranges = acceptLanguage
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.split(';');
      const q = params.map((p) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/.exec(p)?.[1]).find(Boolean);
      return { locale: supported(tag), q: q === undefined ? 1 : Number(q), index };
    })
    .filter((range) => range.locale !== undefined && range.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  return ranges[0]?.locale;
}
