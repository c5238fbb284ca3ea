/**
 * CRC32 (zlib's, ISO 3309) of a concatenation from the CRCs of its parts, as zlib's
 * `crc32_combine`: the CRC is linear over GF(2), so crc(A || B) = crc(A) x^(8 len(B)) mod P xor
 * crc(B). The same identity gives a part back: crc(B) = crc(A) x^(8 len(B)) mod P xor crc(A || B).
 * The order-by-order book keeps each level's CRC this way (l3-book.ts), so that a fill of the first
 * order of a deep level costs that order's text, not the level's. Pure.
 */

/** The CRC-32 polynomial, reflected (bit 31 is x^0). */
const POLY = 0xedb88320;

/** a x b mod P, both reflected (zlib's multmodp); a must not be 0. */
function multModP(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  let v = b;
  for (;;) {
    if ((a & m) !== 0) {
      p ^= v;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    v = v & 1 ? (v >>> 1) ^ POLY : v >>> 1;
  }
  return p >>> 0;
}

/** x^(2^n) mod P for n = 0..31, reflected. */
const X2N: readonly number[] = (() => {
  const table: number[] = [];
  let p = 0x40000000; // x^1
  for (let n = 0; n < 32; n += 1) {
    table.push(p);
    p = multModP(p, p);
  }
  return table;
})();

/** x^(n 2^k) mod P: with k = 3, the operator that moves a CRC past n bytes. */
function x2nModP(n: number, k: number): number {
  let p = 0x80000000; // x^0
  let rest = n;
  let power = k;
  while (rest > 0) {
    if (rest % 2 === 1) p = multModP(X2N[power % 32]!, p);
    rest = Math.floor(rest / 2);
    power += 1;
  }
  return p;
}

/**
 * crc(A || B) from crc(A), crc(B) and the length of B in bytes. Also, given crc(A), crc(A || B) and
 * the length of B, it answers crc(B) (the identity is its own inverse).
 */
export function crc32Combine(crcA: number, crcB: number, bytesOfB: number): number {
  if (crcA === 0) return crcB >>> 0;
  return (multModP(x2nModP(bytesOfB, 3), crcA) ^ crcB) >>> 0;
}
