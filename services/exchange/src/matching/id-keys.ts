/**
 * Order ids as the keys the engine's id-paged structures (OrderIndex, ClosedOrders) store them by.
 *
 * Those structures page ids in runs of 256 or 4,096, which is compact while a market's ids are one
 * dense sequence (one process numbers every order in turn). In a cluster, each market takes the ids
 * congruent to its slot modulo a stride (src/orders/writer.ts `ID_STRIDE`, 1024), so that the nodes
 * writing different markets never take the same id: paged by the id itself, every live order then sat
 * alone in an index page (1 KiB) and every four finished orders took a status page (1 KiB) of their
 * own, about 300 bytes per order that ever left the book instead of a quarter of a byte, and each
 * command allocated pages: five times the CPU per command.
 *
 * With a stride `s` (a power of two), the key of id `q * s + r` is `r * 2^53 / s + q`: the ids of one
 * residue (one market's ids in a cluster) are consecutive keys again, and every safe id still has a
 * key of its own below 2^53, so ids of any other residue (those numbered before the cluster, say) keep
 * working, only less compactly. Stride 1 leaves ids as they are.
 */
export class IdKeys {
  /** 2^53 / stride: the keys of one residue. A power of two, so the arithmetic below is exact. */
  private readonly span: number;

  constructor(readonly stride: number) {
    if (!isIdStride(stride)) {
      throw new Error(`id stride ${stride}: expected a power of two from 1 to 2^20`);
    }
    this.span = 2 ** 53 / stride;
  }

  key(id: number): number {
    const stride = this.stride;
    if (stride === 1) return id;
    const q = Math.floor(id / stride);
    return (id - q * stride) * this.span + q;
  }

  id(key: number): number {
    const stride = this.stride;
    if (stride === 1) return key;
    const residue = Math.floor(key / this.span);
    return (key - residue * this.span) * stride + residue;
  }
}

/** A usable id stride: a power of two from 1 to 2^20. */
export function isIdStride(stride: number): boolean {
  return Number.isInteger(stride) && stride >= 1 && stride <= 2 ** 20 && (stride & (stride - 1)) === 0;
}
