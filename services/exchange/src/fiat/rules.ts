/**
 * Pure rules of fiat services (gateway contract; reference page "Payment gateway" and `withdrawall`):
 * amounts read from the gateway's numbers, limits, the service fee and the field rules of a service.
 * Amounts are bigint minor units with `decimals` places (the currency's `precision.real`).
 */
import { formatAmount, parseAmount } from '../money/decimal.js';
import type { GatewayService, ServiceFee, ServiceField } from './gateway-types.js';

/** Reads a gateway amount (JSON number or decimal text) as minor units, rounding half-up to `decimals`. */
export function gatewayAmount(value: number | string, decimals: number): bigint | undefined {
  const text = typeof value === 'number' ? numberText(value) : value.trim();
  if (text === undefined) return undefined;
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return undefined;
  const [, whole = '0', fraction = ''] = match;
  const kept = BigInt(whole + fraction.slice(0, decimals).padEnd(decimals, '0'));
  return (fraction[decimals] ?? '0') >= '5' ? kept + 1n : kept;
}

/** The shortest decimal text of a non-negative finite number (`1.5` -> "1.5", `1e-7` -> "0.0000001"). */
function numberText(value: number): string | undefined {
  if (!Number.isFinite(value) || value < 0) return undefined;
  const text = String(value);
  return /e/i.test(text) ? value.toFixed(20).replace(/\.?0+$/, '') : text;
}

/** A rate in percent as an exact fraction numerator / denominator. */
function rateFraction(rate: number | string): { numerator: bigint; denominator: bigint } | undefined {
  const text = typeof rate === 'number' ? numberText(rate) : rate.trim();
  if (text === undefined) return undefined;
  const parsed = parseAmount(text, 12);
  if (!parsed.ok || parsed.value < 0n) return undefined;
  return { numerator: parsed.value, denominator: 100n * 10n ** 12n };
}

function roundHalfUp(numerator: bigint, denominator: bigint): bigint {
  const quotient = numerator / denominator;
  return (numerator % denominator) * 2n >= denominator ? quotient + 1n : quotient;
}

export interface FeeRule {
  readonly rateNumerator: bigint;
  readonly rateDenominator: bigint;
  readonly fixed: bigint;
  /** 0 means no lower clamp. */
  readonly min: bigint;
  /** 0 means no upper clamp. */
  readonly max: bigint;
}

export function feeRule(fee: ServiceFee, decimals: number): FeeRule | undefined {
  const rate = rateFraction(fee.rate);
  const fixed = gatewayAmount(fee.fixed, decimals);
  const min = gatewayAmount(fee.min, decimals);
  const max = gatewayAmount(fee.max, decimals);
  if (!rate || fixed === undefined || min === undefined || max === undefined) return undefined;
  return { rateNumerator: rate.numerator, rateDenominator: rate.denominator, fixed, min, max };
}

function clamp(fee: bigint, rule: FeeRule): bigint {
  let clamped = fee;
  if (rule.min > 0n && clamped < rule.min) clamped = rule.min;
  if (rule.max > 0n && clamped > rule.max) clamped = rule.max;
  return clamped;
}

/** The fee on top of `amount`: `rate` percent of it plus `fixed`, clamped to the non-zero min/max. */
export function feeOnTop(amount: bigint, rule: FeeRule): bigint {
  return clamp(roundHalfUp(amount * rule.rateNumerator, rule.rateDenominator) + rule.fixed, rule);
}

export interface WithdrawalSplit {
  /** What the recipient gets (the payout amount sent to the gateway). */
  readonly received: bigint;
  readonly fee: bigint;
  /** What leaves the balance: received + fee. */
  readonly total: bigint;
}

/**
 * The `withdrawall` arithmetic of the reference page. false: the fee is added on top (1000 UAH at
 * 1 % debits 1010, the recipient gets 1000). true: `amount` is the gross and the fee is the one the
 * received part would carry on top, so that received + fee = amount (1000 -> fee 9.90, received
 * 990.10). Undefined when nothing would be left for the recipient.
 */
export function splitWithdrawal(
  amount: bigint,
  rule: FeeRule,
  withdrawAll: boolean,
): WithdrawalSplit | undefined {
  if (amount <= 0n) return undefined;
  if (!withdrawAll) {
    const fee = feeOnTop(amount, rule);
    return { received: amount, fee, total: amount + fee };
  }
  // received * (1 + rate) + fixed = amount, solved for received and rounded half-up.
  const net = amount - rule.fixed;
  if (net <= 0n) return undefined;
  const received = roundHalfUp(net * rule.rateDenominator, rule.rateDenominator + rule.rateNumerator);
  const fee = clamp(amount - received, rule);
  if (fee >= amount) return undefined;
  return { received: amount - fee, fee, total: amount };
}

export type LimitCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly problem: 'below_min' | 'above_max'; readonly message: string };

/** `amount_min <= amount <= amount_max` of a service (a zero max means no upper limit). */
export function checkLimits(amount: bigint, service: GatewayService, decimals: number): LimitCheck {
  const min = gatewayAmount(service.amount_min, decimals) ?? 0n;
  const max = gatewayAmount(service.amount_max, decimals) ?? 0n;
  const currency = service.currency.toUpperCase();
  if (amount < min) {
    return {
      ok: false,
      problem: 'below_min',
      message: `the amount is below the minimum of ${service.code}: ${formatAmount(min, decimals)} ${currency}`,
    };
  }
  if (max > 0n && amount > max) {
    return {
      ok: false,
      problem: 'above_max',
      message: `the amount is above the maximum of ${service.code}: ${formatAmount(max, decimals)} ${currency}`,
    };
  }
  return { ok: true };
}

export type FieldCheck =
  | { readonly ok: true; readonly fields: Readonly<Record<string, string>> }
  | {
      readonly ok: false;
      readonly field: string;
      readonly problem: 'missing' | 'pattern' | 'unknown' | 'too_long';
      readonly message: string;
    };

export const FIELD_VALUE_MAX = 256;

/**
 * Checks field values against a service's dynamic fields: every required field present and not
 * empty, every value matching the field's regexp, no key the service does not know. Values are
 * trimmed; empty optional fields are dropped.
 */
export function checkFields(
  fields: Readonly<Record<string, string>>,
  serviceFields: readonly ServiceField[],
): FieldCheck {
  const known = new Map(serviceFields.map((field) => [field.key, field]));
  for (const key of Object.keys(fields)) {
    if (!known.has(key)) {
      return { ok: false, field: key, problem: 'unknown', message: `the service has no field "${key}"` };
    }
  }
  const accepted: Record<string, string> = {};
  for (const field of [...serviceFields].sort((a, b) => (a.position ?? 0) - (b.position ?? 0))) {
    const value = (fields[field.key] ?? '').trim();
    const label = field.label?.en ?? field.key;
    if (value === '') {
      if (field.required) {
        return {
          ok: false,
          field: field.key,
          problem: 'missing',
          message: `${label} (${field.key}) is required`,
        };
      }
      continue;
    }
    if (value.length > FIELD_VALUE_MAX) {
      return {
        ok: false,
        field: field.key,
        problem: 'too_long',
        message: `${label} (${field.key}) is too long`,
      };
    }
    if (field.regexp && !safeRegExp(field.regexp)?.test(value)) {
      return {
        ok: false,
        field: field.key,
        problem: 'pattern',
        message: `${label} (${field.key}) has the wrong format${field.hint?.en ? `: ${field.hint.en}` : ''}`,
      };
    }
    accepted[field.key] = value;
  }
  return { ok: true, fields: accepted };
}

/** The Luhn checksum of a card number (digits only). */
export function luhnValid(digits: string): boolean {
  if (!/^\d{12,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i += 1) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/**
 * A card number field (the `payment_card` method's `card_number`, or a field the gateway marks
 * `check: "luhn"`) must pass the Luhn check too: a mistyped number is refused before any money moves
 * rather than by the gateway after the funds are locked.
 */
export function checkCardNumbers(
  fields: Readonly<Record<string, string>>,
  service: Pick<GatewayService, 'method' | 'fields'>,
): FieldCheck {
  for (const field of service.fields) {
    const value = fields[field.key];
    if (value === undefined) continue;
    const isCard =
      field.check === 'luhn' || (service.method === 'payment_card' && field.key === 'card_number');
    if (isCard && !luhnValid(value)) {
      return {
        ok: false,
        field: field.key,
        problem: 'pattern',
        message: `${field.label?.en ?? field.key} (${field.key}) is not a valid card number (Luhn check)`,
      };
    }
  }
  return { ok: true, fields };
}

/** A field regexp from the gateway; one that does not compile refuses every value. */
function safeRegExp(source: string): RegExp | undefined {
  try {
    return new RegExp(source, 'u');
  } catch {
    return undefined;
  }
}

/**
 * Masks one destination value for display: a card-like number keeps its first 6 and last 4 digits
 * (`411111******1111`), other values their first and last 2 characters.
 */
export function maskValue(value: string): string {
  const compact = value.replace(/[\s-]/g, '');
  if (/^\d{12,19}$/.test(compact)) {
    return `${compact.slice(0, 6)}${'*'.repeat(compact.length - 10)}${compact.slice(-4)}`;
  }
  if (value.length <= 4) return '*'.repeat(value.length);
  if (value.length <= 8) return `${value.slice(0, 1)}${'*'.repeat(value.length - 2)}${value.slice(-1)}`;
  return `${value.slice(0, 2)}${'*'.repeat(value.length - 4)}${value.slice(-2)}`;
}

export function maskFields(fields: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, maskValue(value)]));
}

/** One line naming the destination for withdrawal details (`payment_card_uah 411111******1111`). */
export function describeDestination(service: string, fields: Readonly<Record<string, string>>): string {
  const masked = Object.values(maskFields(fields));
  return masked.length > 0 ? `${service} ${masked.join(' ')}` : service;
}
