/**
 * JSON Schema -> fast-check arbitraries: `validValue` draws values the schema accepts (often at its
 * edges), `invalidValue` draws values a careless handler chokes on (wrong types, 1e19 and -1, strings
 * of 600+ characters, values outside enums and ranges, unknown and missing fields). An "invalid" value
 * may happen to be valid; the fuzzer's checks hold either way.
 */
import fc from 'fast-check';
import type { Schema } from './openapi.js';

/** Numbers that break parsers, `Date`, `bigint` conversions and SQL integer columns. */
export const HOSTILE_NUMBERS: readonly number[] = [
  1e19,
  -1e19,
  -1,
  0,
  2 ** 31,
  2 ** 53,
  -(2 ** 53),
  2 ** 63,
  1.5,
  -0.5,
  1e308,
  Number.MIN_VALUE,
];

/** Strings that break length limits, encodings and naive parsing. */
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  'x'.repeat(600),
  '9'.repeat(600),
  'é'.repeat(700),
  '😀'.repeat(300),
  '\u0000',
  '\ud800',
  '1e19',
  '-1',
  'NaN',
  'Infinity',
  '0x10',
  '../../etc/passwd',
  "' OR 1=1 --",
  '<script>alert(1)</script>',
  '%00',
  '{"a":1}',
  '2026-13-45T99:99:99Z',
];

/**
 * Known-good values by field or parameter name (a market that exists, a currency code), mixed into
 * the valid values so that generated requests get past lookups and reach the deeper handler code.
 */
export type Examples = Readonly<Record<string, readonly unknown[]>>;

const MAX_STRING = 40;
const MAX_ITEMS = 4;

function types(schema: Schema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  if (schema.type !== undefined) return [schema.type];
  if (schema.properties) return ['object'];
  if (schema.items) return ['array'];
  return [];
}

/** A regex without lookarounds, to generate from; the result is filtered by the full regex. */
function generatablePattern(pattern: string): RegExp {
  return new RegExp(pattern.replace(/\(\?<?[!=][^)]*\)/g, ''));
}

function validString(schema: Schema): fc.Arbitrary<string> {
  if (schema.format === 'date-time')
    return fc
      .date({
        min: new Date('1970-01-02T00:00:00Z'),
        max: new Date('2099-12-31T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString());
  if (schema.format === 'uri' || schema.format === 'url') return fc.webUrl({ size: 'small' });
  if (schema.format === 'email') return fc.emailAddress({ size: 'small' });
  if (schema.pattern !== undefined) {
    const full = new RegExp(schema.pattern);
    return fc.stringMatching(generatablePattern(schema.pattern), { size: 'small' }).filter((s) => {
      if (!full.test(s)) return false;
      return schema.maxLength === undefined || s.length <= schema.maxLength;
    });
  }
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? MAX_STRING, minLength + MAX_STRING));
  const plain = fc.string({ minLength, maxLength });
  const edge = fc.constantFrom('x'.repeat(minLength), 'x'.repeat(schema.maxLength ?? MAX_STRING));
  return fc.oneof({ arbitrary: plain, weight: 4 }, { arbitrary: edge, weight: 1 });
}

function bounds(schema: Schema): { min?: number; max?: number } {
  const min =
    typeof schema.exclusiveMinimum === 'number'
      ? schema.exclusiveMinimum + 1
      : schema.minimum !== undefined && schema.exclusiveMinimum === true
        ? schema.minimum + 1
        : schema.minimum;
  const max =
    typeof schema.exclusiveMaximum === 'number'
      ? schema.exclusiveMaximum - 1
      : schema.maximum !== undefined && schema.exclusiveMaximum === true
        ? schema.maximum - 1
        : schema.maximum;
  return { ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) };
}

function validNumber(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const { min, max } = bounds(schema);
  const low = min ?? -1_000_000;
  const high = max ?? Math.max(low, 0) + 1_000_000;
  const inRange = (n: number) => (min === undefined || n >= min) && (max === undefined || n <= max);
  // Schema-valid extremes (1e19 is an integer to JSON Schema) are where handlers break.
  const edges = HOSTILE_NUMBERS.filter((n) => inRange(n) && (!integer || Number.isInteger(n)));
  const edgeList = [...edges, ...(min !== undefined ? [min] : []), ...(max !== undefined ? [max] : [])];
  const body = integer
    ? fc.integer({ min: Math.ceil(Math.max(low, -(2 ** 31))), max: Math.floor(Math.min(high, 2 ** 31)) })
    : fc.double({ min: low, max: high, noNaN: true, noDefaultInfinity: true });
  return edgeList.length > 0
    ? fc.oneof({ arbitrary: body, weight: 3 }, { arbitrary: fc.constantFrom(...edgeList), weight: 1 })
    : body;
}

/** A valid value for the field `name`: sometimes one of its examples. */
export function validNamed(
  name: string,
  schema: Schema,
  examples: Examples,
  depth = 0,
): fc.Arbitrary<unknown> {
  const known = examples[name];
  const drawn = validValue(schema, depth, examples);
  return known && known.length > 0
    ? fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 3 }, { arbitrary: drawn, weight: 1 })
    : drawn;
}

function validObject(
  schema: Schema,
  depth: number,
  examples: Examples,
): fc.Arbitrary<Record<string, unknown>> {
  const properties = schema.properties ?? {};
  const required = schema.required ?? [];
  const shape = Object.fromEntries(
    Object.entries(properties).map(([k, s]) => [k, validNamed(k, s, examples, depth + 1)]),
  );
  const known = fc.record(shape, { requiredKeys: required.filter((k) => k in properties) });
  const extra = schema.additionalProperties;
  if (typeof extra === 'object' && Object.keys(properties).length === 0) {
    const maxKeys = Math.min(schema.maxProperties ?? MAX_ITEMS, MAX_ITEMS);
    return fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), validValue(extra, depth + 1), {
      maxKeys,
    });
  }
  return known as fc.Arbitrary<Record<string, unknown>>;
}

/** Values `schema` accepts. */
export function validValue(schema: Schema, depth = 0, examples: Examples = {}): fc.Arbitrary<unknown> {
  const plain = validNonNull(schema, depth, examples);
  return schema.nullable ? fc.oneof(plain, fc.constant(null)) : plain;
}

function validNonNull(schema: Schema, depth: number, examples: Examples): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives && alternatives.length > 0)
    return fc.oneof(...alternatives.map((s) => validValue(s, depth, examples)));
  if (schema.allOf?.[0]) return validValue(schema.allOf[0], depth, examples);
  const [type] = types(schema);
  switch (type) {
    case 'string':
      return validString(schema);
    case 'integer':
      return validNumber(schema, true);
    case 'number':
      return validNumber(schema, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = schema.minItems ?? 0;
      const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? MAX_ITEMS, MAX_ITEMS));
      return fc.array(validValue(schema.items ?? {}, depth + 1, examples), { minLength, maxLength });
    }
    case 'object':
      return validObject(schema, depth, examples);
    default:
      return depth > 2 ? fc.constant('x') : fc.jsonValue({ maxDepth: 2 });
  }
}

/** A JSON value of another kind than `schema` asks for. */
function wrongType(schema: Schema): fc.Arbitrary<unknown> {
  const kinds = new Set(types(schema));
  const candidates: unknown[] = [];
  if (!kinds.has('string')) candidates.push('x', '1e19', '');
  if (!kinds.has('integer') && !kinds.has('number')) candidates.push(1e19, -1, 0);
  if (!kinds.has('boolean')) candidates.push(true);
  if (!kinds.has('object')) candidates.push({ a: 1 }, {});
  if (!kinds.has('array')) candidates.push([], [1, 'x']);
  if (!schema.nullable) candidates.push(null);
  return fc.constantFrom(...candidates);
}

/** Values a handler must refuse cleanly (or, when they happen to be valid, handle). */
export function invalidValue(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  const options: fc.Arbitrary<unknown>[] = [
    wrongType(schema),
    fc.constantFrom(...HOSTILE_NUMBERS),
    fc.constantFrom(...HOSTILE_STRINGS),
  ];
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) options.push(...alternatives.map((s) => invalidValue(s, depth + 1)));
  if (schema.enum) options.push(fc.string({ maxLength: 8 }).filter((s) => !schema.enum?.includes(s)));
  if (schema.maxLength !== undefined)
    options.push(fc.constant('y'.repeat(Math.max(600, schema.maxLength + 1))));
  if (schema.minLength !== undefined && schema.minLength > 0)
    options.push(fc.constant('y'.repeat(schema.minLength - 1)));
  const { min, max } = bounds(schema);
  if (min !== undefined) options.push(fc.constantFrom(min - 1, min - 1e19));
  if (max !== undefined) options.push(fc.constantFrom(max + 1, max + 1e19));
  if (types(schema).includes('object') && depth < 3) options.push(invalidObject(schema, depth));
  if (types(schema).includes('array') && depth < 3) {
    options.push(fc.array(invalidValue(schema.items ?? {}, depth + 1), { minLength: 1, maxLength: 3 }));
    if (schema.maxItems !== undefined) options.push(fc.constant(new Array(schema.maxItems + 1).fill(1)));
  }
  return fc.oneof(...options);
}

/** An object with one field broken: unknown, missing, or of a bad value. */
export function invalidObject(
  schema: Schema,
  depth = 0,
  examples: Examples = {},
): fc.Arbitrary<Record<string, unknown>> {
  const base = validObject(schema, depth, examples);
  const properties = Object.entries(schema.properties ?? {});
  const broken: fc.Arbitrary<Record<string, unknown>>[] = [
    // An unknown field, sometimes one that shadows a prototype key.
    fc
      .tuple(
        base,
        fc.constantFrom('unknown_field', '__proto__', 'constructor', 'x'.repeat(600)),
        fc.jsonValue({ maxDepth: 1 }),
      )
      .map(([o, k, v]) => ({ ...o, [k]: v })),
  ];
  const required = schema.required ?? [];
  if (required.length > 0)
    broken.push(
      fc.tuple(base, fc.constantFrom(...required)).map(([o, k]) => {
        const { [k]: _dropped, ...rest } = o;
        return rest;
      }),
    );
  if (properties.length > 0)
    broken.push(
      fc
        .constantFrom(...properties)
        .chain(([k, s]) => fc.tuple(base, fc.constant(k), invalidValue(s, depth + 1)))
        .map(([o, k, v]) => ({ ...o, [k]: v })),
    );
  return fc.oneof(...broken);
}
