import { describe, expect, it } from 'vitest';
import {
  ALPHABET,
  checkCode,
  formatCode,
  generateCode,
  isPublicSegment,
  isValidCode,
} from '../../src/codes/format.js';

/** The valid example and its broken twin from design/exchange-reference.md (Transfer codes). */
const EXAMPLE = 'r4wR3-vjUHK-s6AhZ-UHYBi-iBkra-hMeqU-vj3uh-L74aD-scBcR-BTC-KCode';
const BROKEN = 'r4wR3-vjUHK-s6AhZ-UHYBi-ickra-hMeqU-vj3uh-L74aD-scBcR-BTC-KCode';
/** Where the body (9 segments and their separators) ends: the suffix tokens follow. */
const BODY_END = 9 * 6 - 1;
/** Characters to substitute: the alphabet, the four look-alikes it leaves out, separators, blanks. */
const REPLACEMENTS = [...ALPHABET, '0', 'O', 'I', 'l', '-', '_', ' ', '.', 'é'];

describe('transfer code format: offline check', () => {
  it('accepts the reference example and refuses its broken twin by the checksum', () => {
    expect(checkCode(EXAMPLE)).toEqual({
      ok: true,
      code: {
        body: 'r4wR3vjUHKs6AhZUHYBiiBkrahMeqUvj3uhL74aDscBcR',
        publicSegment: 'r4wR3',
        currencyToken: 'BTC',
        marker: 'KCode',
      },
    });
    expect(checkCode(BROKEN)).toEqual({ ok: false, problem: 'checksum' });
  });

  it('refuses every single-character change of the example body (each position, every replacement)', () => {
    let tried = 0;
    for (let at = 0; at < BODY_END; at += 1) {
      for (const replacement of REPLACEMENTS) {
        if (replacement === EXAMPLE[at]) continue;
        const changed = EXAMPLE.slice(0, at) + replacement + EXAMPLE.slice(at + 1);
        expect(isValidCode(changed), `${at}: ${replacement}`).toBe(false);
        tried += 1;
      }
      // Deleting or doubling a character breaks the shape too.
      expect(isValidCode(EXAMPLE.slice(0, at) + EXAMPLE.slice(at + 1))).toBe(false);
      expect(isValidCode(EXAMPLE.slice(0, at + 1) + EXAMPLE.slice(at))).toBe(false);
    }
    expect(tried).toBeGreaterThan(53 * 60);
  });

  it('does not cover the suffix with the checksum, but needs two tokens of letters and digits', () => {
    // "Validation strips the last two tokens whatever they are": another currency or marker validates;
    // the currency token is checked against the stored code at redemption.
    expect(isValidCode(EXAMPLE.replace('-BTC-', '-ETH-'))).toBe(true);
    expect(isValidCode(EXAMPLE.replace('KCode', 'SCode'))).toBe(true);
    expect(checkCode(EXAMPLE.replace('-BTC-', '--'))).toEqual({ ok: false, problem: 'shape' });
    expect(checkCode(EXAMPLE.replace('-KCode', ''))).toEqual({ ok: false, problem: 'shape' });
    expect(checkCode(`${EXAMPLE}-x`)).toEqual({ ok: false, problem: 'shape' });
    expect(checkCode(EXAMPLE.replace('KCode', 'K Code'))).toEqual({ ok: false, problem: 'shape' });
  });

  it('refuses non-strings and ignores surrounding blanks only', () => {
    expect(checkCode(undefined)).toEqual({ ok: false, problem: 'not_a_string' });
    expect(checkCode(42)).toEqual({ ok: false, problem: 'not_a_string' });
    expect(checkCode('')).toEqual({ ok: false, problem: 'shape' });
    expect(isValidCode(`  ${EXAMPLE}\n`)).toBe(true);
    expect(checkCode(EXAMPLE.replace('vjUHK', 'vjUH0'))).toEqual({ ok: false, problem: 'alphabet' });
  });

  it('generates valid codes with the -<CURRENCY>-SCode suffix from the random source', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 500; i += 1) {
      const { code, parsed } = generateCode('btc');
      expect(code).toMatch(/^([1-9a-km-zA-HJ-NP-Z]{5}-){9}BTC-SCode$/);
      expect(isValidCode(code)).toBe(true);
      expect(parsed.currencyToken).toBe('BTC');
      expect(parsed.marker).toBe('SCode');
      expect(isPublicSegment(parsed.publicSegment)).toBe(true);
      seen.add(parsed.body);
    }
    expect(seen.size).toBe(500);
  });

  it('uses every alphabet character about equally (rejection sampling, no modulo bias)', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 400; i += 1) {
      for (const char of generateCode('eth').parsed.body.slice(1))
        counts.set(char, (counts.get(char) ?? 0) + 1);
    }
    // 17,600 characters, 303 expected per character; a biased generator (bytes % 58) would give the
    // first 24 characters about 25 % more.
    expect(counts.size).toBe(58);
    for (const count of counts.values()) expect(count).toBeGreaterThan(200);
    for (const count of counts.values()) expect(count).toBeLessThan(420);
  });

  it('draws from the given source: all-zero bytes give the first character, checksum included', () => {
    const { code } = generateCode('usdt', (size) => new Uint8Array(size));
    expect(code).toBe(`${formatCode('1'.repeat(45), 'usdt')}`);
    expect(code.endsWith('-USDT-SCode')).toBe(true);
  });
});
