import { CHECKSUM_DEPTH } from './checksum.js';

/**
 * The best `count` prices of a side, best first (bids: highest first; asks: lowest first), in one
 * pass over an unsorted set of prices: a checksum per batch costs the side's levels times the depth,
 * never a sort of the whole side. Pure.
 */
export function bestPrices(
  prices: Iterable<bigint>,
  highestFirst: boolean,
  count = CHECKSUM_DEPTH,
): bigint[] {
  const best: bigint[] = [];
  const better = highestFirst ? (a: bigint, b: bigint) => a > b : (a: bigint, b: bigint) => a < b;
  for (const price of prices) {
    if (best.length === count && !better(price, best[count - 1]!)) continue;
    let at = best.length;
    while (at > 0 && better(price, best[at - 1]!)) at -= 1;
    best.splice(at, 0, price);
    if (best.length > count) best.pop();
  }
  return best;
}
