import { numberText, plainDecimal } from './decimal-text.js';

/**
 * JSON request bodies whose numbers count by their text.
 *
 * `JSON.parse` reads `0.99999999999999999` as 1 and `100.0000000000000001` as 100 before any route sees
 * them (Node 20 has no access to a number's source text), so an amount sent as a JSON number could be
 * rounded silently. This reader scans the text first: a number token whose exact decimal value a double
 * holds (`0.1`, `12.5`, `1e-8`, `1700000000000`) stays a number; any other (`0.99999999999999999`,
 * `9007199254740993`, `1.00000000000000000001e2`) becomes the string of its exact plain decimal
 * (`"100.000000000000000001"`), or of its own text when that would pass `MAX_PLAIN_LENGTH` characters
 * (`1e999999999`). An amount then reads that exact text (more digits than the currency's are
 * `too_many_decimals`, a huge exponent `validation_failed`), and a field typed number only refuses a
 * string: nothing is rounded on the way.
 *
 * A key repeated in one object is refused: which of the two values counts differs between readers, and
 * a signed body must mean one thing.
 */

/** The JSON number grammar (RFC 8259), whole token. */
const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;
const NUMBER_START = /[-0-9]/;
const NUMBER_CHAR = /[-+0-9.eE]/;

export class DuplicateKeyError extends Error {
  constructor(readonly key: string) {
    super(`the key ${JSON.stringify(key)} appears twice in one object`);
    this.name = 'DuplicateKeyError';
  }
}

/**
 * What a JSON number token reads as: undefined when a double holds its exact value (it stays a
 * number), else the text the field receives instead (its exact plain decimal, or the token itself
 * when that is too long).
 */
export function inexactNumberText(token: string): string | undefined {
  const plain = plainDecimal(token);
  if (plain === undefined) return token;
  return canonicalDecimal(plain) === canonicalDecimal(numberText(Number(token))) ? undefined : plain;
}

/** A plain decimal without a redundant sign, leading zeros or trailing fraction zeros. */
function canonicalDecimal(text: string): string {
  const negative = text.startsWith('-');
  const [rawWhole = '0', rawFraction = ''] = (negative ? text.slice(1) : text).split('.');
  const whole = rawWhole.replace(/^0+(?=.)/, '');
  const fraction = rawFraction.replace(/0+$/, '');
  const body = fraction ? `${whole}.${fraction}` : whole;
  return negative && body !== '0' ? `-${body}` : body;
}

type Reviver = (this: unknown, key: string, value: unknown) => unknown;

export class PrototypeKeyError extends SyntaxError {
  constructor(readonly key: '__proto__' | 'constructor.prototype') {
    super(`the key "${key}" is not allowed`);
    this.name = 'PrototypeKeyError';
  }
}

/**
 * A reviver refusing `__proto__` and `constructor.prototype` keys, as Fastify's own parser does
 * (secure-json-parse): code that copies or merges such an object could change every object's
 * prototype. Every reader of client JSON (request bodies, WebSocket frames) uses it.
 */
export function refusePrototypeKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') throw new PrototypeKeyError('__proto__');
  if (key === 'constructor' && value !== null && typeof value === 'object' && 'prototype' in value)
    throw new PrototypeKeyError('constructor.prototype');
  return value;
}

/**
 * How deep arrays and objects may nest. `JSON.parse` with a reviver recurses once per level, so a
 * 20,000-deep body overflowed the stack and the client read "Maximum call stack size exceeded"; no
 * request of these APIs nests beyond a handful of levels.
 */
export const MAX_JSON_DEPTH = 256;

export class JsonDepthError extends SyntaxError {
  constructor(readonly limit: number) {
    super(`arrays and objects nest deeper than ${limit} levels`);
    this.name = 'JsonDepthError';
  }
}

/**
 * `JSON.parse` where a number a double does not hold exactly becomes the string of its text, and a
 * repeated key throws `DuplicateKeyError`. Malformed JSON throws `SyntaxError`, as `JSON.parse` does,
 * and nesting deeper than `maxDepth` throws `JsonDepthError` (a `SyntaxError`).
 */
export function parseJsonKeepingNumberText(
  text: string,
  reviver?: Reviver,
  maxDepth: number = MAX_JSON_DEPTH,
): unknown {
  const inexact: [number, number, string][] = [];
  // One entry per open container: the keys seen so far in an object, null for an array.
  const open: (Set<string> | null)[] = [];
  let expectKey = false;
  let i = 0;
  while (i < text.length) {
    const char = text.charAt(i);
    if (char === '"') {
      const end = stringEnd(text, i);
      const keys = open.at(-1);
      if (expectKey && keys) {
        const key = JSON.parse(text.slice(i, end)) as string;
        if (keys.has(key)) throw new DuplicateKeyError(key);
        keys.add(key);
        expectKey = false;
      }
      i = end;
    } else if (NUMBER_START.test(char)) {
      let end = i + 1;
      while (end < text.length && NUMBER_CHAR.test(text.charAt(end))) end += 1;
      const token = text.slice(i, end);
      // A token outside the grammar is left to JSON.parse, which refuses it.
      if (JSON_NUMBER.test(token)) {
        const replacement = inexactNumberText(token);
        if (replacement !== undefined) inexact.push([i, end, replacement]);
      }
      i = end;
    } else {
      if (char === '{' || char === '[') {
        if (open.length >= maxDepth) throw new JsonDepthError(maxDepth);
        open.push(char === '{' ? new Set() : null);
        expectKey = char === '{';
      } else if (char === '}' || char === ']') {
        open.pop();
        expectKey = false;
      } else if (char === ',') {
        expectKey = open.at(-1) != null;
      }
      i += 1;
    }
  }
  // A string in place of a valid number token replaces one JSON value by another: validity is unchanged.
  const pieces: string[] = [];
  let copied = 0;
  for (const [start, end, replacement] of inexact) {
    pieces.push(text.slice(copied, start), `"${replacement}"`);
    copied = end;
  }
  pieces.push(text.slice(copied));
  const source = pieces.join('');
  return reviver ? JSON.parse(source, reviver) : JSON.parse(source);
}

/** The index after the closing quote of the string starting at `start` (or the text's end). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    const char = text.charAt(i);
    if (char === '\\') i += 2;
    else if (char === '"') return i + 1;
    else i += 1;
  }
  return text.length;
}
