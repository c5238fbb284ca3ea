import type { FieldRule } from '../domain/fields.js';
import { decimalToNumber, formatMinor } from '../domain/money.js';
import type { Catalog, Merchant, Method, Service } from './catalog.js';

/** The published field object: the configured rule without the gateway's internal `check`. */
function publicField(rule: FieldRule) {
  return {
    key: rule.key,
    type: rule.type,
    label: rule.label,
    example: rule.example,
    hint: rule.hint,
    regexp: rule.regexp,
    required: rule.required,
    position: rule.position,
  };
}

function fee(service: Service) {
  return {
    rate: decimalToNumber(service.fee.rate),
    fixed: decimalToNumber(service.fee.fixed),
    min: decimalToNumber(service.fee.min),
    max: decimalToNumber(service.fee.max),
  };
}

function method(m: Method, publicUrl: string) {
  const logo = `${publicUrl}/assets/methods/${m.code}.svg`;
  return {
    code: m.code,
    category: m.category,
    description: m.description,
    name: m.name,
    logo,
    icon: logo,
    metadata: m.metadata,
    position: m.position,
    hide: m.hide,
  };
}

function account(merchant: Merchant) {
  return {
    name: merchant.name,
    description: merchant.description,
    icon: merchant.icon,
    website: merchant.website,
  };
}

function methodsOf(catalog: Catalog, services: readonly Service[], publicUrl: string) {
  const methods: Record<string, ReturnType<typeof method>> = {};
  for (const service of services) {
    const m = catalog.methods.get(service.method);
    if (m) methods[m.code] = method(m, publicUrl);
  }
  return methods;
}

/**
 * The deposit prerequest response (spec "Gateway prerequest response"): the merchant's `hpp`
 * services of the currency with their fields, limits and fee.
 */
export function paymentPrerequest(catalog: Catalog, merchant: Merchant, currency: string, publicUrl: string) {
  const services = catalog.servicesFor(currency, 'hpp');
  const byCode: Record<string, unknown> = {};
  for (const s of services) {
    byCode[s.code] = {
      code: s.code,
      method: s.method,
      flow: s.flow,
      currency: s.currency,
      fields: s.fields.map(publicField),
      amount_min: decimalToNumber(s.amountMin),
      amount_max: decimalToNumber(s.amountMax),
      fee: fee(s),
    };
  }
  return {
    data: {
      currency,
      test_mode: merchant.testMode,
      services: byCode,
      methods: methodsOf(catalog, services, publicUrl),
      account: account(merchant),
    },
  };
}

/**
 * The payout prerequest response, shaped as exchange-reference.md's example: the requested amount
 * as a number at the top, and per service the amount as a string with the currency's decimals and
 * the exchange rate (1: every service pays out in the requested currency).
 */
export function payoutPrerequest(
  catalog: Catalog,
  merchant: Merchant,
  currency: string,
  amountMinor: bigint,
  publicUrl: string,
) {
  const precision = catalog.precision.get(currency) ?? 2;
  const amountText = formatMinor(amountMinor, precision);
  const services = catalog.servicesFor(currency, 'payout');
  const byCode: Record<string, unknown> = {};
  for (const s of services) {
    byCode[s.code] = {
      code: s.code,
      method: s.method,
      currency: s.currency,
      fields: s.fields.map(publicField),
      amount_min: decimalToNumber(s.amountMin),
      amount_max: decimalToNumber(s.amountMax),
      exchange_rate: 1,
      amount: amountText,
      fee: fee(s),
    };
  }
  return {
    data: {
      currency,
      amount: decimalToNumber(amountText),
      test_mode: merchant.testMode,
      services: byCode,
      methods: methodsOf(catalog, services, publicUrl),
      account: account(merchant),
    },
  };
}
