import { crc32 } from 'node:zlib';

/**
 * Book checksums in Kraken's scheme (WebSocket v1/v2 `book`, v2 `level3`), so that client code
 * written for Kraken checks ours unchanged: CRC32 (zlib, ISO 3309) over the top 10 ask levels low to
 * high, then the top 10 bid levels high to low, each level adding its price then its amount printed
 * with the market's fixed precision, the decimal point removed and leading zeros stripped. The L3
 * checksum adds every order of those levels, in queue order, instead of the level's total.
 *
 * A value printed with `p` fixed decimals, its point removed and its leading zeros stripped, is the
 * decimal text of its minor units (`0.00000500` at 8 decimals is 500 units: `500`), which is what
 * the server holds: no formatting is needed on this side. Pure.
 */

/** Levels per side a checksum covers. */
export const CHECKSUM_DEPTH = 10;

/** A price and an amount in minor units (quote_precision and base_precision decimals). */
export type ChecksumEntry = readonly [price: bigint, amount: bigint];

/** Kraken's text of one value: its fixed-precision digits without the point and leading zeros. */
function digits(minor: bigint): string {
  return minor === 0n ? '' : minor.toString();
}

function textOf(entries: readonly ChecksumEntry[], count: number): string {
  let text = '';
  for (let i = 0; i < count; i += 1) {
    const [price, amount] = entries[i]!;
    text += digits(price) + digits(amount);
  }
  return text;
}

const depthOf = (list: readonly unknown[]) => Math.min(list.length, CHECKSUM_DEPTH);

/**
 * The checksum of a book: `asks` low to high and `bids` high to low (best first); levels past
 * CHECKSUM_DEPTH are not read.
 */
export function bookChecksum(asks: readonly ChecksumEntry[], bids: readonly ChecksumEntry[]): number {
  return crc32(textOf(asks, depthOf(asks)) + textOf(bids, depthOf(bids)));
}

/**
 * The L3 checksum: per side the best CHECKSUM_DEPTH price levels (asks low to high, bids high to
 * low), each given as its orders in queue order (`[price, amount]` of each order).
 */
export function l3Checksum(
  askLevels: readonly (readonly ChecksumEntry[])[],
  bidLevels: readonly (readonly ChecksumEntry[])[],
): number {
  const texts: string[] = [];
  for (let i = 0; i < depthOf(askLevels); i += 1) texts.push(levelText(askLevels[i]!));
  for (let i = 0; i < depthOf(bidLevels); i += 1) texts.push(levelText(bidLevels[i]!));
  return checksumOfTexts(texts);
}

/** The checksum text of one level's orders (`[price, amount]` each, in queue order). */
export function levelText(orders: readonly ChecksumEntry[]): string {
  return textOf(orders, orders.length);
}

/**
 * The CRC32 of texts one after the other, as of their concatenation (the CRC continues from one to
 * the next): a book keeps each level's text until the level changes and joins none of them.
 */
export function checksumOfTexts(texts: Iterable<string | Buffer>): number {
  let crc = 0;
  for (const text of texts) crc = crc32(text, crc);
  return crc;
}

/**
 * Minor units of a JSON number printed with `precision` fixed decimals (a client's view of a frame's
 * numbers; `toFixed` prints the nearest decimal, which for the prices and amounts of a market's
 * precision is the value sent).
 */
export function minorOf(value: number, precision: number): bigint {
  return BigInt(Math.abs(value).toFixed(precision).replace('.', ''));
}
