import { randomBytes } from 'node:crypto';

/**
 * Format and offline check of transfer codes (spec: "Transfer code object", "Offline validity check";
 * design/exchange-reference.md "Transfer codes"). Pure: no I/O; the random source is a parameter.
 *
 * A code is nine segments of five characters of ALPHABET joined by `-` (the 45-character body), then
 * two more `-`-separated tokens: the currency and a marker (ours is `SCode`). The first character of
 * the body is the checksum: its alphabet index equals the sum of the indexes of the other 44, modulo
 * 58. The suffix is not covered by the checksum ("validation strips the last two tokens whatever
 * they are", so codes of other systems of this family validate too); the currency token is checked
 * against the stored code when it is redeemed.
 */

/** The 58-character alphabet of the spec (no 0, O, I, l). */
export const ALPHABET = '123456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ';
export const SEGMENTS = 9;
export const SEGMENT_LENGTH = 5;
export const BODY_LENGTH = SEGMENTS * SEGMENT_LENGTH;
/** The marker token of codes issued here. */
export const MARKER = 'SCode';

const INDEX: ReadonlyMap<string, number> = new Map([...ALPHABET].map((char, index) => [char, index]));
const SEGMENT = new RegExp(`^[${ALPHABET}]{${SEGMENT_LENGTH}}$`);
/** A suffix token: letters and digits (currency symbols like `USDT`, markers like `SCode`). */
const SUFFIX_TOKEN = /^[A-Za-z0-9]{1,16}$/;

export type CodeProblem = 'not_a_string' | 'shape' | 'alphabet' | 'checksum';

export interface ParsedCode {
  /** The 45 characters of the nine segments, without separators. */
  readonly body: string;
  /** Segment 1: the public part, used by the public check. */
  readonly publicSegment: string;
  /** The currency token as written (`BTC`). */
  readonly currencyToken: string;
  readonly marker: string;
}

export type CodeCheck =
  | { readonly ok: true; readonly code: ParsedCode }
  | { readonly ok: false; readonly problem: CodeProblem };

/** The checksum character of 44 body characters (all from ALPHABET). */
function checksumOf(rest: string): string {
  let sum = 0;
  for (const char of rest) sum += INDEX.get(char) ?? Number.NaN;
  return ALPHABET[sum % ALPHABET.length] ?? '';
}

/**
 * The offline validity check. Only the structure and the checksum are checked: a valid code need not
 * exist. Surrounding whitespace is ignored (pasted codes); nothing else is normalised.
 */
export function checkCode(input: unknown): CodeCheck {
  if (typeof input !== 'string') return { ok: false, problem: 'not_a_string' };
  const tokens = input.trim().split('-');
  if (tokens.length !== SEGMENTS + 2) return { ok: false, problem: 'shape' };
  const segments = tokens.slice(0, SEGMENTS);
  const [currencyToken = '', marker = ''] = tokens.slice(SEGMENTS);
  if (!SUFFIX_TOKEN.test(currencyToken) || !SUFFIX_TOKEN.test(marker)) return { ok: false, problem: 'shape' };
  for (const segment of segments) {
    if (segment.length !== SEGMENT_LENGTH) return { ok: false, problem: 'shape' };
    if (!SEGMENT.test(segment)) return { ok: false, problem: 'alphabet' };
  }
  const body = segments.join('');
  if (checksumOf(body.slice(1)) !== body[0]) return { ok: false, problem: 'checksum' };
  return { ok: true, code: { body, publicSegment: body.slice(0, SEGMENT_LENGTH), currencyToken, marker } };
}

/** True when `input` passes the offline check (structure and checksum). */
export function isValidCode(input: unknown): boolean {
  return checkCode(input).ok;
}

/** Is `text` a well-formed public segment (the path parameter of the public check)? */
export function isPublicSegment(text: string): boolean {
  return SEGMENT.test(text);
}

/** `count` characters of ALPHABET, uniformly, from the random source. */
function randomChars(count: number, random: (size: number) => Uint8Array): string {
  let out = '';
  while (out.length < count) {
    for (const byte of random(count)) {
      // 232 = 4 * 58: rejecting larger bytes keeps every character equally likely.
      if (byte < 232 && out.length < count) out += ALPHABET[byte % ALPHABET.length];
    }
  }
  return out;
}

/** Writes a body (45 characters) as nine dash-joined segments plus the `-<CURRENCY>-<marker>` suffix. */
export function formatCode(body: string, currency: string, marker = MARKER): string {
  const segments: string[] = [];
  for (let at = 0; at < body.length; at += SEGMENT_LENGTH) segments.push(body.slice(at, at + SEGMENT_LENGTH));
  return `${segments.join('-')}-${currency.toUpperCase()}-${marker}`;
}

/**
 * A new code for `currency`: 44 characters from a cryptographic random source (about 258 bits),
 * the checksum in front, the `-<CURRENCY>-SCode` suffix.
 */
export function generateCode(
  currency: string,
  random: (size: number) => Uint8Array = randomBytes,
): { code: string; parsed: ParsedCode } {
  const rest = randomChars(BODY_LENGTH - 1, random);
  const body = checksumOf(rest) + rest;
  const code = formatCode(body, currency);
  const checked = checkCode(code);
  if (!checked.ok) throw new Error(`generated an invalid code (${checked.problem})`);
  return { code, parsed: checked.code };
}
