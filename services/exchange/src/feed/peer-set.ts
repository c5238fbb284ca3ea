import type { Peer } from './peer.js';

/**
 * The connections following one channel (of a market, or of an account), and a list of them kept
 * until the set changes: the frames of every batch queued for the same followers carry the same
 * list, by which the outbox sees at once that they go to the same connections (outbox.ts).
 */
export class PeerSet extends Set<Peer> {
  private listed: readonly Peer[] | undefined;

  override add(peer: Peer): this {
    if (!this.has(peer)) this.listed = undefined;
    return super.add(peer);
  }

  override delete(peer: Peer): boolean {
    const deleted = super.delete(peer);
    if (deleted) this.listed = undefined;
    return deleted;
  }

  override clear(): void {
    this.listed = undefined;
    super.clear();
  }

  /** The followers as a list that stays the same object until one comes or goes. */
  list(): readonly Peer[] {
    this.listed ??= Object.freeze([...this]);
    return this.listed;
  }
}
