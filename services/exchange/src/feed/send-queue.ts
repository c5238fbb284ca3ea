import type { Socket } from 'node:net';

/**
 * What one connection has still to write, in order, bounded: WebSocket frames already framed
 * (ws-frame.ts), written to the connection's TCP socket as it drains. A client that does not read
 * is never buffered for: when what waits for it (here and in the socket's own buffer) would pass
 * `maxBytes`, the queue refuses the frames and the connection is dropped (4008, FEED_MAX_BUFFERED_BYTES).
 *
 * A replay (a resume's frames from the journal, journal.ts) is taken lazily, a frame at a time and
 * only while the socket has room: a client resuming after many batches reads them at its own pace,
 * and the frames committed meanwhile wait behind it (counted against the bound).
 */
export class SendQueue {
  private readonly backlog: (Buffer | Iterator<Buffer>)[] = [];
  /** Bytes of the frames waiting in `backlog` (a replay's count once taken). */
  private bytes = 0;
  private waiting = false;

  constructor(
    private readonly socket: Socket,
    private readonly maxBytes: number,
  ) {}

  /** Bytes waiting for the client: here and in the socket's buffer. */
  get pending(): number {
    return this.bytes + this.socket.writableLength;
  }

  /** Queues frames behind what waits; false (nothing queued) when they would pass the bound. */
  push(frames: readonly Buffer[]): boolean {
    let total = 0;
    for (const frame of frames) total += frame.length;
    if (this.pending + total > this.maxBytes) return false;
    if (this.backlog.length === 0 && this.socket.writableLength === 0) {
      this.write(frames);
      return true;
    }
    for (const frame of frames) this.backlog.push(frame);
    this.bytes += total;
    this.pump();
    return true;
  }

  /**
   * Queues a replay behind what waits, taken as the socket drains, from the next turn on (the
   * answer that announces it, sent right after, goes first).
   */
  replay(frames: Iterable<Buffer>): void {
    this.backlog.push(frames[Symbol.iterator]());
    setImmediate(() => this.pump());
  }

  /** Writes what waits while the socket has room (under a quarter of the bound), then waits for it to drain. */
  private pump(): void {
    const room = Math.max(16_384, this.maxBytes / 4);
    const batch: Buffer[] = [];
    let taken = 0;
    while (this.backlog.length > 0 && this.socket.writableLength + taken < room) {
      const head = this.backlog[0]!;
      if (Buffer.isBuffer(head)) {
        this.backlog.shift();
        this.bytes -= head.length;
        batch.push(head);
        taken += head.length;
        continue;
      }
      const next = head.next();
      if (next.done) {
        this.backlog.shift();
        continue;
      }
      batch.push(next.value);
      taken += next.value.length;
    }
    if (batch.length > 0) this.write(batch);
    if (this.backlog.length === 0 || this.waiting || this.socket.destroyed) return;
    this.waiting = true;
    const again = () => {
      this.waiting = false;
      this.pump();
    };
    // The kernel may have taken it all at once: then no 'drain' comes, the next turn goes on.
    if (this.socket.writableNeedDrain) this.socket.once('drain', again);
    else setImmediate(again);
  }

  private write(frames: readonly Buffer[]): void {
    if (this.socket.destroyed) return;
    if (frames.length === 1) {
      this.socket.write(frames[0]!);
      return;
    }
    // One write for all: the corked chunks leave in one writev.
    this.socket.cork();
    for (const frame of frames) this.socket.write(frame);
    this.socket.uncork();
  }
}
