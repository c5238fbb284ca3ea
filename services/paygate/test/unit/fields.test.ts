import { describe, expect, it } from 'vitest';
import { type FieldRule, validateFields } from '../../src/domain/fields.js';

const card: FieldRule = {
  key: 'card_number',
  type: 'string',
  label: { en: 'Card number' },
  hint: { en: 'digits' },
  example: null,
  regexp: '^\\d{12,19}$',
  required: true,
  position: 0,
  check: 'luhn',
};
const note: FieldRule = {
  ...card,
  key: 'note',
  label: { en: 'Note' },
  regexp: '^[a-z]{1,5}$',
  required: false,
  position: 1,
};
delete (note as { check?: string }).check;

describe('service fields', () => {
  it('normalises card numbers and keeps optional fields optional', () => {
    expect(validateFields([card, note], { card_number: '4242 4242 4242 4242' })).toEqual({
      ok: true,
      values: { card_number: '4242424242424242' },
    });
  });

  it('names the field at fault', () => {
    expect(validateFields([card], {})).toMatchObject({ ok: false, field: 'card_number', reason: 'missing' });
    expect(validateFields([card], { card_number: '42' })).toMatchObject({
      ok: false,
      field: 'card_number',
      reason: 'pattern',
    });
    expect(validateFields([card], { card_number: '4242424242424241' })).toMatchObject({
      ok: false,
      field: 'card_number',
      reason: 'luhn',
    });
    expect(validateFields([card, note], { card_number: '4242424242424242', note: 'ABC' })).toMatchObject({
      ok: false,
      field: 'note',
      reason: 'pattern',
    });
    expect(validateFields([card], { card_number: '4242424242424242', iban: 'x' })).toMatchObject({
      ok: false,
      field: 'iban',
      reason: 'unknown',
    });
    expect(validateFields([card], { card_number: { n: 1 } })).toMatchObject({
      ok: false,
      reason: 'not_text',
    });
  });
});
