import type { OutgoingFrame, Peer } from './peer.js';

/** A frame, or how to make it when its turn comes (a snapshot: as the book is then, not when asked). */
export type QueuedFrame = OutgoingFrame | (() => OutgoingFrame);

interface Entry {
  readonly frame: QueuedFrame;
  /** The receivers as they were when the frame was queued (a later subscriber gets a snapshot instead). */
  readonly peers: readonly Peer[];
}

/**
 * The frames of the feed waiting to be written, in one FIFO for every connection so each receives
 * its frames in the order they were made. Written `perTurn` sends at a time, yielding to the event
 * loop in between: a frame for 1,000 subscribers is 1,000 socket writes, and done at once it held
 * order entry (whose commits arrive on the same loop) for the whole fan-out.
 */
export class Outbox {
  private entries: Entry[] = [];
  private entry = 0;
  private peer = 0;
  private scheduled = false;

  constructor(
    private readonly perTurn: number,
    /** Runs when everything queued was written (the hub then sends what came in meanwhile). */
    private readonly onEmpty: () => void,
  ) {}

  get empty(): boolean {
    return this.entry >= this.entries.length;
  }

  push(frame: QueuedFrame, peers: Iterable<Peer>): void {
    const list = [...peers];
    if (list.length === 0) return;
    this.entries.push({ frame, peers: list });
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }

  private drain(): void {
    let budget = this.perTurn;
    while (budget > 0 && this.entry < this.entries.length) {
      const { frame: queued, peers } = this.entries[this.entry]!;
      const frame = typeof queued === 'function' ? queued() : queued;
      const end = Math.min(peers.length, this.peer + budget);
      for (let i = this.peer; i < end; i += 1) peers[i]!.deliver(frame);
      budget -= end - this.peer;
      this.peer = end;
      if (this.peer >= peers.length) {
        this.entry += 1;
        this.peer = 0;
      }
    }
    if (this.entry < this.entries.length) {
      setImmediate(() => this.drain());
      return;
    }
    this.entries = [];
    this.entry = 0;
    this.scheduled = false;
    this.onEmpty();
  }
}
