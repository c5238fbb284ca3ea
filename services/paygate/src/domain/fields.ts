import { luhnValid, normaliseCardNumber } from './card.js';

/** One dynamic input of a service, as listed in the prerequest response. */
export interface FieldRule {
  readonly key: string;
  readonly type: string;
  readonly label: Readonly<Record<string, string>>;
  readonly hint: Readonly<Record<string, string>>;
  readonly example: string | null;
  readonly regexp: string;
  readonly required: boolean;
  readonly position: number;
  /** An extra check after the regexp (not part of the published field object). */
  readonly check?: 'luhn';
}

export type FieldsResult =
  | { readonly ok: true; readonly values: Readonly<Record<string, string>> }
  | {
      readonly ok: false;
      readonly field: string;
      readonly reason: 'unknown' | 'missing' | 'not_text' | 'pattern' | 'luhn';
      readonly message: string;
    };

const label = (rule: FieldRule): string => rule.label.en ?? rule.key;

/**
 * Validates merchant-supplied values against a service's fields: unknown keys are refused (a typo
 * must not silently drop a destination), required ones must be present, every present value must
 * match the field's regexp, and card numbers must pass Luhn. Card numbers are read without the
 * spaces and dashes people type. Returns the normalised values.
 */
export function validateFields(
  rules: readonly FieldRule[],
  input: Readonly<Record<string, unknown>>,
): FieldsResult {
  const byKey = new Map(rules.map((rule) => [rule.key, rule]));
  for (const key of Object.keys(input)) {
    if (!byKey.has(key)) {
      return { ok: false, field: key, reason: 'unknown', message: `"${key}" is not a field of this service` };
    }
  }
  const values: Record<string, string> = {};
  for (const rule of [...rules].sort((a, b) => a.position - b.position)) {
    const raw = input[rule.key];
    if (raw === undefined || raw === null || raw === '') {
      if (rule.required) {
        return { ok: false, field: rule.key, reason: 'missing', message: `${label(rule)} is required` };
      }
      continue;
    }
    if (typeof raw !== 'string' && typeof raw !== 'number') {
      return { ok: false, field: rule.key, reason: 'not_text', message: `${label(rule)} must be text` };
    }
    const text = rule.check === 'luhn' ? normaliseCardNumber(String(raw)) : String(raw).trim();
    if (!new RegExp(rule.regexp).test(text)) {
      return {
        ok: false,
        field: rule.key,
        reason: 'pattern',
        message: `${label(rule)} has an invalid format`,
      };
    }
    if (rule.check === 'luhn' && !luhnValid(text)) {
      return {
        ok: false,
        field: rule.key,
        reason: 'luhn',
        message: `${label(rule)} is not a valid card number (checksum failed)`,
      };
    }
    values[rule.key] = text;
  }
  return { ok: true, values };
}
