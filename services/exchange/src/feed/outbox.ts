import type { FanOutPace } from './fan-out-pace.js';
import type { OutgoingFrame, Peer } from './peer.js';
import { textFrame } from './ws-frame.js';

/** A frame, or how to make it when its turn comes (a snapshot: as the book is then, not when asked). */
export type QueuedFrame = OutgoingFrame | (() => OutgoingFrame);

interface Entry {
  readonly frame: QueuedFrame;
  /**
   * The receivers as they were when the frame was queued (a later subscriber gets a snapshot
   * instead). Frames for the same followers carry the same list (peer-set.ts).
   */
  readonly peers: readonly Peer[];
}

/**
 * The connections that receive the same frames in a round: those in the same lists of receivers.
 * Their frames are joined into one buffer once, which each of them is written.
 */
interface Audience {
  readonly peers: Peer[];
  readonly entries: number[];
  joined?: { readonly framed: Buffer; readonly payloads: readonly Buffer[] };
}

/** The frames queued since the last round, being written audience by audience. */
interface Round {
  readonly entries: readonly Entry[];
  readonly audiences: readonly Audience[];
  /** Frames made so far (the JSON payload and its WebSocket frame), by entry. */
  readonly made: ({ readonly payload: Buffer; readonly framed: Buffer } | undefined)[];
  audience: number;
  peer: number;
}

const toBuffer = (frame: OutgoingFrame): Buffer => (typeof frame === 'string' ? Buffer.from(frame) : frame);

/**
 * The frames of the feed waiting to be written, in one FIFO for every connection so each receives
 * its frames in the order they were made. What was queued since the last round is written as one
 * round: each frame framed once (ws-frame.ts), the frames of the connections that receive the same
 * ones joined once, and each connection written its frames of the round in one write, the same bytes
 * for all of them (a connection following the book and the trades of a market gets both frames of a
 * batch, and those of every batch committed while the round before was written or waited, in one
 * system call). The work of a round is the number of connections plus the number of frames times the
 * number of distinct audiences, not frames times connections. `perTurn` connections are written at a
 * time, yielding to the event loop in between: a round for 1,000 subscribers done at once would hold
 * order entry (whose commits arrive on the same loop) for the whole fan-out.
 */
export class Outbox {
  private queued: Entry[] = [];
  private round: Round | undefined;
  private scheduled = false;
  /** CPU the current round took so far (µs). */
  private roundCpu = 0;

  constructor(
    private readonly perTurn: number,
    /** Runs when everything queued was written (the hub then sends what came in meanwhile). */
    private readonly onEmpty: () => void,
    /**
     * When the next round may start (fan-out-pace.ts). Writing to a connection costs a system call
     * whatever it carries (9-10 µs measured on this machine), so 1,000 subscribers cost ~10 ms a
     * round: round after round, batch after batch, they would take as much of the process as order
     * entry itself. Without it a round follows the one before at once.
     */
    private readonly pace?: FanOutPace,
  ) {}

  get empty(): boolean {
    return this.round === undefined && this.queued.length === 0;
  }

  /** Queues a frame for `peers` (a list is taken as is and must not change; another iterable is copied). */
  push(frame: QueuedFrame, peers: Iterable<Peer>): void {
    const list = Array.isArray(peers) ? (peers as readonly Peer[]) : [...peers];
    if (list.length === 0) return;
    this.queued.push({ frame, peers: list });
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const wait = this.round || !this.pace ? 0 : this.pace.wait();
    if (wait === 0) {
      setImmediate(() => this.drain());
      return;
    }
    setTimeout(() => {
      this.scheduled = false;
      this.schedule();
    }, wait);
  }

  private drain(): void {
    this.scheduled = false;
    if (!this.round) {
      if (this.queued.length === 0) return;
      this.round = startRound(this.queued);
      this.queued = [];
      this.roundCpu = 0;
    }
    const cpu = this.pace ? process.cpuUsage() : undefined;
    const round = this.round;
    let budget = this.perTurn;
    while (budget > 0 && round.audience < round.audiences.length) {
      const audience = round.audiences[round.audience]!;
      const joined = joinedOf(round, audience);
      const end = Math.min(audience.peers.length, round.peer + budget);
      for (let i = round.peer; i < end; i += 1) {
        const peer = audience.peers[i]!;
        if (peer.deliverFramed) peer.deliverFramed([joined.framed], joined.payloads);
        else for (const payload of joined.payloads) peer.deliver(payload);
      }
      budget -= end - round.peer;
      round.peer = end;
      if (round.peer >= audience.peers.length) {
        round.audience += 1;
        round.peer = 0;
      }
    }
    if (cpu) {
      const used = process.cpuUsage(cpu);
      this.roundCpu += used.user + used.system;
    }
    if (round.audience < round.audiences.length) {
      this.schedule();
      return;
    }
    this.round = undefined;
    this.pace?.ended(this.roundCpu);
    if (this.queued.length > 0) {
      this.schedule();
      return;
    }
    this.onEmpty();
  }
}

/** Splits a round's receivers into audiences: those in the same lists of receivers, hence the same frames. */
function startRound(entries: readonly Entry[]): Round {
  const lists = new Map<readonly Peer[], number>();
  const listOf = entries.map((entry) => {
    let index = lists.get(entry.peers);
    if (index === undefined) {
      index = lists.size;
      lists.set(entry.peers, index);
    }
    return index;
  });
  // Each connection's lists, as text: connections with the same text are one audience.
  const memberships = new Map<Peer, string>();
  for (const [list, index] of lists)
    for (const peer of list) memberships.set(peer, `${memberships.get(peer) ?? ''}${index},`);
  const byMembership = new Map<string, Audience>();
  for (const [peer, membership] of memberships) {
    let audience = byMembership.get(membership);
    if (!audience) {
      const member = new Set(membership.split(',').slice(0, -1).map(Number));
      audience = { peers: [], entries: listOf.flatMap((list, entry) => (member.has(list) ? [entry] : [])) };
      byMembership.set(membership, audience);
    }
    audience.peers.push(peer);
  }
  return {
    entries,
    audiences: [...byMembership.values()],
    made: new Array(entries.length),
    audience: 0,
    peer: 0,
  };
}

/** An audience's frames joined, made at its first member's turn (a snapshot is made then, from the book as it is). */
function joinedOf(round: Round, audience: Audience): NonNullable<Audience['joined']> {
  if (audience.joined) return audience.joined;
  const made = audience.entries.map((index) => {
    let frame = round.made[index];
    if (!frame) {
      const queued = round.entries[index]!.frame;
      const payload = toBuffer(typeof queued === 'function' ? queued() : queued);
      frame = { payload, framed: textFrame(payload) };
      round.made[index] = frame;
    }
    return frame;
  });
  audience.joined = {
    framed: made.length === 1 ? made[0]!.framed : Buffer.concat(made.map((m) => m.framed)),
    payloads: made.map((m) => m.payload),
  };
  return audience.joined;
}
