import { seedName, testSeeds } from '@platform/testkit/seeds';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decimalText, MAX_MINOR, numberText, parseDecimal, parseId } from '../src/decimal-text.js';
import {
  DuplicateKeyError,
  inexactNumberText,
  JsonDepthError,
  MAX_JSON_DEPTH,
  parseJsonKeepingNumberText,
} from '../src/json-numbers.js';

const SEEDS = testSeeds([28, 2028]);

const digits = (min: number, max: number) =>
  fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((d) => d.join(''));
/** A plain decimal text as JSON allows it for a number too (no leading zeros). */
const decimal = fc
  .tuple(fc.boolean(), digits(1, 25), fc.option(digits(1, 30), { nil: undefined }))
  .map(([negative, whole, fraction]) => {
    const w = whole.replace(/^0+(?=\d)/, '');
    return `${negative ? '-' : ''}${w}${fraction === undefined ? '' : `.${fraction}`}`;
  });

/** The exact value of a plain decimal at `precision`, or undefined when it has more decimals. */
function oracle(text: string, precision: number): bigint | undefined {
  const negative = text.startsWith('-');
  const [whole = '', fraction = ''] = (negative ? text.slice(1) : text).split('.');
  const significant = fraction.replace(/0+$/, '');
  if (significant.length > precision) return undefined;
  const value = BigInt(whole + significant.padEnd(precision, '0'));
  return negative ? -value : value;
}

/** What parseDecimal answers for an exact value (or undefined: too many decimals). */
function expected(minor: bigint | undefined) {
  if (minor === undefined) return { ok: false, reason: 'too_many_decimals' };
  if (minor > MAX_MINOR || -minor > MAX_MINOR) return { ok: false, reason: 'out_of_range' };
  return { ok: true, minor };
}

/** Values no amount may be: each is a JSON value a client can send. */
const hostile = fc.oneof(
  fc.constantFrom(
    '0x1',
    '0X1',
    '0b1',
    '0o1',
    '1e0',
    '1E5',
    '1e-7',
    '+1',
    '.5',
    '5.',
    '-.5',
    '1_000',
    '1,5',
    '١',
    '５',
    '𝟏',
    'Infinity',
    '-Infinity',
    'NaN',
    '',
    ' ',
    '--1',
    '0x',
    '1..2',
    '1.2.3',
  ),
  decimal.map((d) => ` ${d}`),
  decimal.map((d) => `${d} `),
  decimal.map((d) => `${d}\n`),
  decimal.map((d) => `\t${d}`),
  decimal.map((d) => `+${d.replace(/^-/, '')}`),
  decimal.map((d) => `${d}e1`),
  decimal.map((d) => `${d}E-2`),
  decimal.map((d) => `0x${d.replace(/^-/, '')}`),
  decimal.map((d) => `${d}.`),
  decimal.map((d) => `.${d.replace(/^-/, '')}`),
  decimal.map((d) => d.replace(/[0-9]/, '٣')),
);
const nonStrings = fc.oneof(
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
  fc.bigInt(),
);

describe('parseDecimal', () => {
  it.each([
    ['1', 8, 100_000_000n],
    ['0.1', 2, 10n],
    ['-12.345', 3, -12_345n],
    ['1.500', 1, 15n],
    ['0', 2, 0n],
    ['007.5', 1, 75n],
  ])('%s at precision %i is %s', (text, precision, minor) => {
    expect(parseDecimal(text, precision)).toEqual({ ok: true, minor });
  });

  it.each(['0x1', '0b1', '0o1', '1e0', ' 1', '+1', '.5', '5.', '١'])('refuses %j', (text) => {
    expect(parseDecimal(text, 8)).toEqual({ ok: false, reason: 'not_a_decimal' });
  });

  it.each([true, false, [1], { a: 1 }, null, undefined, Number.NaN, Number.POSITIVE_INFINITY])(
    'refuses the non-number %j',
    (value) => {
      expect(parseDecimal(value, 8)).toEqual({ ok: false, reason: 'not_a_decimal' });
    },
  );

  it('reads a JSON number from its shortest text: 0.1 is one tenth, 1e-7 is 0.0000001', () => {
    expect(parseDecimal(0.1, 1)).toEqual({ ok: true, minor: 1n });
    expect(parseDecimal(1e-7, 7)).toEqual({ ok: true, minor: 1n });
    expect(parseDecimal(1e-7, 6)).toEqual({ ok: false, reason: 'too_many_decimals' });
    expect(parseDecimal(1e18, 0)).toEqual({ ok: true, minor: 10n ** 18n });
    expect(parseDecimal(1e21, 0)).toEqual({ ok: false, reason: 'out_of_range' });
    expect(parseDecimal('9'.repeat(5000), 2)).toEqual({ ok: false, reason: 'out_of_range' });
    expect(parseDecimal('9223372036854775807', 0)).toEqual({ ok: true, minor: MAX_MINOR });
    expect(parseDecimal('-9223372036854775808', 0)).toEqual({ ok: false, reason: 'out_of_range' });
  });

  for (const seed of SEEDS)
    it(`a plain decimal string is worth exactly its text, at any precision: ${seedName(seed)}`, () => {
      fc.assert(
        fc.property(decimal, fc.integer({ min: 0, max: 20 }), (text, precision) => {
          expect(parseDecimal(text, precision)).toEqual(expected(oracle(text, precision)));
        }),
        { seed, numRuns: 2000 },
      );
    });

  for (const seed of SEEDS)
    it(`nothing else is a decimal: ${seedName(seed)}`, () => {
      fc.assert(
        fc.property(fc.oneof(hostile, nonStrings), fc.integer({ min: 0, max: 20 }), (value, precision) => {
          expect(decimalText(value)).toBeUndefined();
          expect(parseDecimal(value, precision)).toEqual({ ok: false, reason: 'not_a_decimal' });
        }),
        { seed, numRuns: 2000 },
      );
    });

  for (const seed of SEEDS)
    it(`numberText is a plain decimal that reads back as the same double: ${seedName(seed)}`, () => {
      fc.assert(
        fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
          const text = numberText(value);
          expect(text).toMatch(/^-?\d+(\.\d+)?$/);
          expect(Number(text)).toBe(value === 0 ? 0 : value);
        }),
        { seed, numRuns: 2000 },
      );
    });
});

describe('parseJsonKeepingNumberText', () => {
  it('keeps numbers a double holds exactly and turns the others into their text', () => {
    const body = parseJsonKeepingNumberText(
      '{"a":0.1,"b":0.99999999999999999,"c":1e0,"d":[100.0000000000000001,12],"e":"1e0","f":9007199254740993,"g":-0,"h":1.50,"i":1.0000000000000000001E1,"j":1e9999}',
    );
    expect(body).toEqual({
      a: 0.1,
      b: '0.99999999999999999',
      c: 1,
      d: ['100.0000000000000001', 12],
      e: '1e0',
      f: '9007199254740993',
      g: -0,
      h: 1.5,
      i: '10.000000000000000001',
      j: '1e9999',
    });
  });

  it('refuses nesting past MAX_JSON_DEPTH with its own message, also with a reviver (which recursed past the stack)', () => {
    const reviver = (_key: string, value: unknown) => value;
    for (const [open, close] of [
      ['[', ']'],
      ['{"a":', '}'],
    ] as const) {
      const nested = (depth: number) => `${open.repeat(depth)}1${close.repeat(depth)}`;
      expect(() => parseJsonKeepingNumberText(nested(MAX_JSON_DEPTH), reviver)).not.toThrow();
      expect(() => parseJsonKeepingNumberText(nested(MAX_JSON_DEPTH + 1), reviver)).toThrow(JsonDepthError);
      expect(() => parseJsonKeepingNumberText(nested(20_000), reviver)).toThrow(
        `arrays and objects nest deeper than ${MAX_JSON_DEPTH} levels`,
      );
    }
    // Brackets inside strings are text, not nesting.
    const text = { a: '['.repeat(20_000) };
    expect(parseJsonKeepingNumberText(JSON.stringify(text), reviver)).toEqual(text);
  });

  it('refuses a key repeated in one object, at any depth, and allows it in sibling objects', () => {
    expect(() => parseJsonKeepingNumberText('{"amount":1,"amount":2}')).toThrow(DuplicateKeyError);
    expect(() => parseJsonKeepingNumberText('{"a":{"x":1,"y":{},"x":2}}')).toThrow(DuplicateKeyError);
    expect(() => parseJsonKeepingNumberText('{"a":"\\u0061","\\u0061":1}')).toThrow(DuplicateKeyError);
    expect(parseJsonKeepingNumberText('[{"a":1},{"a":2}]')).toEqual([{ a: 1 }, { a: 2 }]);
    expect(parseJsonKeepingNumberText('{"a":"{\\"a\\":1,","b":["a","a"]}')).toEqual({
      a: '{"a":1,',
      b: ['a', 'a'],
    });
  });

  it.each(['{"a":01}', '{"a":1.}', '{"a":.5}', '{"a":+1}', '{"a":0x1}', '{"a":1e}', '[1 2]', '{"a":1', '"x'])(
    'refuses the malformed %s as JSON.parse does',
    (text) => {
      expect(() => parseJsonKeepingNumberText(text)).toThrow(SyntaxError);
    },
  );

  for (const seed of SEEDS)
    it(`a number token counts by its text (the amount read is the amount written): ${seedName(seed)}`, () => {
      fc.assert(
        fc.property(decimal, fc.integer({ min: 0, max: 12 }), (text, precision) => {
          const body = parseJsonKeepingNumberText(`{"amount":${text},"n":[${text}]}`) as {
            amount: unknown;
            n: unknown[];
          };
          const parsed = parseDecimal(body.amount, precision);
          expect(parsed).toEqual(expected(oracle(text, precision)));
          expect(parseDecimal(body.n[0], precision)).toEqual(parsed);
        }),
        { seed, numRuns: 2000 },
      );
    });

  for (const seed of SEEDS)
    it(`any JSON document reads as JSON.parse reads it, but for inexact numbers: ${seedName(seed)}`, () => {
      fc.assert(
        fc.property(fc.json(), (text) => {
          const normal = (_key: string, value: unknown): unknown =>
            typeof value === 'string' && /^-?\d/.test(value) ? Number(value) : value;
          const expected = JSON.stringify(JSON.parse(text), normal);
          expect(JSON.stringify(parseJsonKeepingNumberText(text), normal)).toBe(expected);
        }),
        { seed, numRuns: 500 },
      );
    });

  for (const seed of SEEDS)
    it(`a number in exponent form counts by its exact value: ${seedName(seed)}`, () => {
      fc.assert(
        fc.property(
          decimal,
          fc.integer({ min: -40, max: 40 }),
          fc.integer({ min: 0, max: 12 }),
          (mantissa, exponent, precision) => {
            const body = parseJsonKeepingNumberText(`{"amount":${mantissa}e${exponent}}`) as {
              amount: unknown;
            };
            // The oracle: value = digits * 10^(exponent - decimals), at `precision` decimals when exact.
            const negative = mantissa.startsWith('-');
            const [whole = '', fraction = ''] = (negative ? mantissa.slice(1) : mantissa).split('.');
            const shift = exponent - fraction.length + precision;
            const scaled = BigInt(whole + fraction);
            const divisor = shift < 0 ? 10n ** BigInt(-shift) : 1n;
            const exact = shift >= 0 || scaled % divisor === 0n;
            const minor = shift >= 0 ? scaled * 10n ** BigInt(shift) : scaled / divisor;
            expect(parseDecimal(body.amount, precision)).toEqual(
              expected(exact ? (negative ? -minor : minor) : undefined),
            );
          },
        ),
        { seed, numRuns: 2000 },
      );
    });

  it('inexactNumberText: undefined when a double holds the exact value, else the exact text', () => {
    expect(inexactNumberText('0.1')).toBeUndefined();
    expect(inexactNumberText('1.000')).toBeUndefined();
    expect(inexactNumberText('-0.0')).toBeUndefined();
    expect(inexactNumberText('1e21')).toBeUndefined();
    expect(inexactNumberText('1E-8')).toBeUndefined();
    expect(inexactNumberText('0.30000000000000004')).toBeUndefined();
    expect(inexactNumberText('123456789012345678901')).toBe('123456789012345678901');
    expect(inexactNumberText('0.3000000000000000444')).toBe('0.3000000000000000444');
    expect(inexactNumberText('1.00000000000000000001e2')).toBe('100.000000000000000001');
    expect(inexactNumberText('1e400')).toBe(`1${'0'.repeat(400)}`);
    expect(inexactNumberText('1e999999999')).toBe('1e999999999');
    expect(inexactNumberText('1e-99999999999999999999')).toBe('1e-99999999999999999999');
  });
});

describe('parseId', () => {
  it.each([
    [1, 1],
    ['42', 42],
    [9_007_199_254_740_991, 9_007_199_254_740_991],
  ])('%j is %i', (value, id) => {
    expect(parseId(value)).toBe(id);
  });

  it.each([
    '0x9',
    '9e0',
    '+9',
    ' 9',
    '9 ',
    '9.0',
    '',
    '0',
    0,
    -1,
    1.5,
    true,
    [9],
    null,
    '١',
    '99999999999999999',
    2 ** 53,
  ])('refuses %j', (value) => {
    expect(parseId(value)).toBeUndefined();
  });

  it('refuses ids past the bound given', () => {
    expect(parseId('2147483648', 2_147_483_647)).toBeUndefined();
    expect(parseId(2_147_483_647, 2_147_483_647)).toBe(2_147_483_647);
  });
});
