import type { OutgoingFrame, Peer } from './peer.js';
import { textFrame } from './ws-frame.js';

/** A frame, or how to make it when its turn comes (a snapshot: as the book is then, not when asked). */
export type QueuedFrame = OutgoingFrame | (() => OutgoingFrame);

interface Entry {
  readonly frame: QueuedFrame;
  /** The receivers as they were when the frame was queued (a later subscriber gets a snapshot instead). */
  readonly peers: readonly Peer[];
}

/** A frame's bytes, made once for all its receivers: the JSON payload and the WebSocket frame around it. */
interface Made {
  readonly payload: Buffer;
  readonly framed: Buffer;
}

/** The frames queued since the last round, being written peer by peer. */
interface Round {
  readonly entries: readonly Entry[];
  /** Per peer, the entries it receives, in the order they were queued. */
  readonly byPeer: Map<Peer, number[]>;
  readonly peers: readonly Peer[];
  readonly made: (Made | undefined)[];
  next: number;
}

const toBuffer = (frame: OutgoingFrame): Buffer => (typeof frame === 'string' ? Buffer.from(frame) : frame);

/**
 * The frames of the feed waiting to be written, in one FIFO for every connection so each receives
 * its frames in the order they were made. What was queued since the last round is written as one
 * round: each frame framed once (ws-frame.ts, the same bytes for every receiver, no copy per
 * connection), then each connection gets all of its frames of the round in one write (a connection
 * following the book and the trades of a market gets both frames of a batch, and those of every
 * batch that came while the round before was written, in one system call, not one per frame).
 * `perTurn` connections are written at a time, yielding to the event loop in between: a round for
 * 1,000 subscribers done at once would hold order entry (whose commits arrive on the same loop) for
 * the whole fan-out.
 */
export class Outbox {
  private queued: Entry[] = [];
  private round: Round | undefined;
  private scheduled = false;
  /** CPU the current round took so far (µs), and the earliest time the next round may start (ms). */
  private roundCpu = 0;
  private nextRoundAt = 0;

  constructor(
    private readonly perTurn: number,
    /** Runs when everything queued was written (the hub then sends what came in meanwhile). */
    private readonly onEmpty: () => void,
    /**
     * The share of the process's time the writes may take (0 < share <= 1): after a round that took
     * c of CPU, the next starts c x (1 / share - 1) later at the earliest, and the frames of the
     * batches committed meanwhile go out together in it (still one frame per batch). Writing to a
     * connection costs a system call whatever it carries (measured 9 µs on this machine), so 1,000
     * subscribers cost ~10 ms a round: round after round, batch after batch, they would take as much
     * of the process as order entry itself. 1: no pause (a round follows the one before at once).
     */
    private readonly share = 1,
  ) {}

  get empty(): boolean {
    return this.round === undefined && this.queued.length === 0;
  }

  push(frame: QueuedFrame, peers: Iterable<Peer>): void {
    const list = [...peers];
    if (list.length === 0) return;
    this.queued.push({ frame, peers: list });
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const wait = this.round ? 0 : this.nextRoundAt - performance.now();
    if (wait > 0) setTimeout(() => this.drain(), wait);
    else setImmediate(() => this.drain());
  }

  private drain(): void {
    this.scheduled = false;
    if (!this.round) {
      if (this.queued.length === 0) return;
      this.round = startRound(this.queued);
      this.queued = [];
      this.roundCpu = 0;
    }
    const cpu = this.share < 1 ? process.cpuUsage() : undefined;
    const round = this.round;
    const end = Math.min(round.peers.length, round.next + this.perTurn);
    for (; round.next < end; round.next += 1) {
      const peer = round.peers[round.next]!;
      const made = round.byPeer.get(peer)!.map((index) => madeOf(round, index));
      if (peer.deliverFramed)
        peer.deliverFramed(
          made.map((m) => m.framed),
          made.map((m) => m.payload),
        );
      else for (const m of made) peer.deliver(m.payload);
    }
    if (cpu) {
      const used = process.cpuUsage(cpu);
      this.roundCpu += used.user + used.system;
    }
    if (round.next < round.peers.length) {
      this.schedule();
      return;
    }
    this.round = undefined;
    this.nextRoundAt = performance.now() + (this.roundCpu / 1000) * (1 / this.share - 1);
    if (this.queued.length > 0) {
      this.schedule();
      return;
    }
    this.onEmpty();
  }
}

function startRound(entries: readonly Entry[]): Round {
  const byPeer = new Map<Peer, number[]>();
  entries.forEach((entry, index) => {
    for (const peer of entry.peers) {
      const list = byPeer.get(peer);
      if (list) list.push(index);
      else byPeer.set(peer, [index]);
    }
  });
  return { entries, byPeer, peers: [...byPeer.keys()], made: new Array(entries.length), next: 0 };
}

/** An entry's bytes, made at the first receiver's turn (a snapshot is made then, from the book as it is). */
function madeOf(round: Round, index: number): Made {
  let made = round.made[index];
  if (!made) {
    const queued = round.entries[index]!.frame;
    const payload = toBuffer(typeof queued === 'function' ? queued() : queued);
    made = { payload, framed: textFrame(payload) };
    round.made[index] = made;
  }
  return made;
}
