import http2 from 'node:http2';
import {
  AUTH_HEADER,
  channelAuth,
  FORWARD_PATH,
  type ForwardAnswer,
  type ForwardedRequest,
  fields,
  LineReader,
} from './forward.js';
import { decodeWire, encodeWire, signWire, verifyAnswer, type WireKeys, wireKeys } from './wire.js';

/**
 * How a sender tells a paused owner from a busy one. A paused process (SIGSTOP, a frozen VM) keeps
 * its TCP connections open, so nothing fails on the wire: requests written to it just wait. Its
 * HTTP/2 session answers no PING either (PINGs are answered by the owner's event loop), while a busy
 * owner answers within its loop's stall.
 */
export interface Liveness {
  /** How often a channel's session is pinged. */
  readonly pingIntervalMs: number;
  /**
   * A ping (or the channel's opening) unanswered this long: the owner does not run. Its channel
   * takes no new request (the sender waits for the lease to move instead) and, once the market's
   * lease moved, its requests waiting for an answer end at once as unknown outcomes (ClusterNode).
   * Above an event-loop stall of a loaded node (GC, a busy 2-core machine: a few hundred ms); a
   * false alarm only holds new requests back until the next answered ping.
   */
  readonly unresponsiveMs: number;
  /**
   * Not answering for this long, the channel is replaced by a new session for the next request: a
   * connection that went silent (a path that drops packets) while the owner lives. Until then the
   * same channel serves again as soon as the owner answers (a session per retry would make a loaded
   * owner set up sessions it cannot answer in time).
   */
  readonly reopenMs: number;
  /** A channel with nothing waiting and no request for this long is closed by its sender (the owner's idle bound is twice that). */
  readonly idleMs: number;
}

export const LIVENESS: Liveness = {
  pingIntervalMs: 250,
  unresponsiveMs: 1_000,
  reopenMs: 5_000,
  idleMs: 60_000,
};

/**
 * The liveness of a node's channels with lease `leaseMs`: not answering for half a lease (at least
 * 1 s) counts as paused; a node that cannot answer a ping in that time is about to lose its leases
 * anyway, and below it the alarms would hold back requests to an owner that is only busy.
 */
export function livenessFor(leaseMs: number): Liveness {
  const unresponsiveMs = Math.max(LIVENESS.unresponsiveMs, Math.floor(leaseMs / 2));
  return { ...LIVENESS, unresponsiveMs, reopenMs: Math.max(LIVENESS.reopenMs, 2 * leaseMs) };
}

/** How long a request may wait for its answer at a responsive owner (its batch may still commit). */
export const FORWARD_TIMEOUT_MS = 10_000;

/** Why a forward did not get an answer. */
export class ForwardFailed extends Error {
  constructor(
    message: string,
    /** The request may have reached the owner (its outcome is unknown). */
    readonly maybeSent: boolean,
  ) {
    super(message);
    this.name = 'ForwardFailed';
  }
}

/** Whether `url` still holds `market`'s lease under `epoch` (as the sender last read the leases). */
export type StillOwner = (url: string, market: string, epoch: number) => boolean;

interface Waiting {
  readonly market: string;
  /** The lease epoch of the owner the request was sent to, when known. */
  readonly epoch: number | undefined;
  /** The request's signature, which its answer's signature covers. */
  readonly signature: string;
  readonly line: string;
  /** Written to the owner's stream: from then on it may have run there. */
  written: boolean;
  readonly resolve: (answer: ForwardAnswer) => void;
  readonly reject: (error: ForwardFailed) => void;
  readonly timer: NodeJS.Timeout;
}

interface ChannelEvents {
  /** The channel stopped taking requests (its owner does not answer); it still waits for what it sent. */
  retire(channel: Channel): void;
  /** The channel is over. */
  end(channel: Channel): void;
}

/** One node's channel to one owner: its stream and the requests waiting for their answers. */
class Channel {
  readonly waiting = new Map<number, Waiting>();
  private readonly reader = new LineReader();
  private readonly openedAt = performance.now();
  /** The owner answered the opening with 200: requests are written from then on, not before. */
  private ready = false;
  private ended = false;
  private retired = false;
  private pingSentAt: number | undefined;
  private lastUsed = performance.now();
  private readonly pinger: NodeJS.Timeout;

  constructor(
    readonly url: string,
    readonly session: http2.ClientHttp2Session,
    readonly stream: http2.ClientHttp2Stream,
    private readonly keys: WireKeys,
    private readonly liveness: Liveness,
    private readonly events: ChannelEvents,
  ) {
    stream.setEncoding('utf8');
    stream.on('response', (headers) => {
      const status = Number(headers[':status']);
      // Refused (401: another key; 404: not a node of this version): nothing was written, nothing ran.
      if (status !== 200) {
        this.fail(`${url} answered ${status}`);
        return;
      }
      this.ready = true;
      for (const waiting of this.waiting.values()) this.write(waiting);
    });
    stream.on('data', (text: string) => this.read(text));
    // Node ends a stream without an 'error' too when the owner's session goes away (its process
    // killed: a FIN rather than an RST): every request written and still waiting may have run there.
    stream.on('end', () => this.fail(`${url} closed the channel without an answer`));
    stream.on('error', (error) => this.fail(`${url}: ${error.message}`));
    stream.on('close', () => this.fail(`${url} closed the channel without an answer`));
    this.pinger = setInterval(() => this.watch(), liveness.pingIntervalMs);
    this.pinger.unref();
  }

  /** Takes new requests. */
  get usable(): boolean {
    return (
      !this.ended &&
      !this.retired &&
      !this.stream.destroyed &&
      !this.session.closed &&
      !this.session.destroyed
    );
  }

  /** How long the owner has not answered a ping (or the channel's opening); 0 when it answers. */
  private silentFor(): number {
    const now = performance.now();
    if (!this.ready) return now - this.openedAt;
    return this.pingSentAt === undefined ? 0 : now - this.pingSentAt;
  }

  /** The owner has not answered a ping (or the opening) for `unresponsiveMs`. */
  get unresponsive(): boolean {
    return this.silentFor() > this.liveness.unresponsiveMs;
  }

  send(number: number, waiting: Waiting): void {
    this.lastUsed = performance.now();
    if (this.unresponsive) {
      clearTimeout(waiting.timer);
      waiting.reject(new ForwardFailed(`${this.url} does not answer`, false));
      return;
    }
    this.waiting.set(number, waiting);
    if (this.ready) this.write(waiting);
  }

  private write(waiting: Waiting): void {
    if (waiting.written) return;
    waiting.written = true;
    this.stream.write(waiting.line);
  }

  /** A request that waited too long: its outcome is unknown if it was written (it may still run at the owner). */
  expire(number: number): void {
    const waiting = this.waiting.get(number);
    if (!waiting) return;
    this.waiting.delete(number);
    waiting.reject(new ForwardFailed(`${this.url} did not answer in time`, waiting.written));
  }

  /**
   * Ends, as unknown outcomes, the written requests whose market's lease moved from this owner while
   * it does not answer: it cannot commit them any more (its batches are fenced by the lease), and
   * whether it committed one before is known only to it. Returns how many.
   */
  failWhereLeaseMoved(stillOwner: StillOwner): number {
    if (!this.unresponsive) return 0;
    let failed = 0;
    for (const [number, waiting] of this.waiting) {
      if (!waiting.written || waiting.epoch === undefined) continue;
      if (stillOwner(this.url, waiting.market, waiting.epoch)) continue;
      this.waiting.delete(number);
      clearTimeout(waiting.timer);
      waiting.reject(
        new ForwardFailed(`${this.url} lost the lease of ${waiting.market} and does not answer`, true),
      );
      failed += 1;
    }
    this.closeIfDone();
    return failed;
  }

  /** Every ping interval: pings the owner, notices it does not answer, closes an idle channel. */
  private watch(): void {
    if (this.ended) return;
    if (this.unresponsive) {
      // What was not written yet surely did not run: it may go elsewhere (or wait for the lease).
      for (const [number, waiting] of this.waiting) {
        if (waiting.written) continue;
        this.waiting.delete(number);
        clearTimeout(waiting.timer);
        waiting.reject(new ForwardFailed(`${this.url} does not answer`, false));
      }
      if (!this.retired && this.silentFor() > this.liveness.reopenMs) {
        this.retired = true;
        this.events.retire(this);
      }
      this.closeIfDone();
      return;
    }
    if (this.ready && this.pingSentAt === undefined) {
      const sentAt = performance.now();
      try {
        this.session.ping((error) => {
          if (!error && this.pingSentAt === sentAt) this.pingSentAt = undefined;
        });
        this.pingSentAt = sentAt;
      } catch {
        // The session is closing: its stream's events end the channel.
      }
    }
    if (this.waiting.size === 0 && performance.now() - this.lastUsed > this.liveness.idleMs) {
      this.fail(`${this.url}: idle channel closed`);
    }
  }

  /** A retired channel closes once nothing waits on it. */
  private closeIfDone(): void {
    if (this.retired && this.waiting.size === 0) {
      this.fail(`${this.url} does not answer`);
      this.session.destroy();
    }
  }

  private read(text: string): void {
    const lines = this.reader.push(text);
    if (!lines) {
      this.fail(`${this.url} sent an unreadable answer`);
      return;
    }
    for (const line of lines) {
      const [number = '', status = '', signature = '', body = ''] = fields(line, 4) ?? [];
      const waiting = this.waiting.get(Number(number));
      if (!waiting) continue;
      this.waiting.delete(Number(number));
      clearTimeout(waiting.timer);
      if (!verifyAnswer(this.keys.answer, number, waiting.signature, status, body, signature)) {
        // Not the owner's answer (a relay on the nodes' network changed it, or another key): what
        // the owner did is unknown.
        waiting.reject(new ForwardFailed(`${this.url} sent an answer that failed its check`, true));
        continue;
      }
      if (status === '401') {
        waiting.reject(new ForwardFailed(`${this.url} refused the request's signature`, false));
        continue;
      }
      try {
        if (status !== '200') throw new Error(`status ${status}`);
        waiting.resolve(decodeWire<ForwardAnswer>(body));
      } catch {
        waiting.reject(new ForwardFailed(`${this.url} answered an unreadable line`, true));
      }
    }
    this.closeIfDone();
  }

  /** The channel is over: every request still waiting fails, unknown where it was written. */
  fail(message: string): void {
    if (!this.ended) {
      this.ended = true;
      clearInterval(this.pinger);
      this.events.end(this);
    }
    for (const [number, waiting] of this.waiting) {
      this.waiting.delete(number);
      clearTimeout(waiting.timer);
      waiting.reject(new ForwardFailed(message, waiting.written));
    }
    if (!this.stream.destroyed) this.stream.close(http2.constants.NGHTTP2_CANCEL);
    this.session.close();
  }
}

/**
 * The sending side: one channel (and HTTP/2 session) per owner, opened on first use and again after
 * it ended or stopped answering.
 */
export class ForwardClient {
  /** The channel taking new requests, per owner URL. */
  private readonly current = new Map<string, Channel>();
  /** Every channel not ended yet (retired ones still wait for answers). */
  private readonly channels = new Set<Channel>();
  private readonly keys: WireKeys;
  private next = 0;

  constructor(
    key: Buffer,
    private readonly timeoutMs = FORWARD_TIMEOUT_MS,
    private readonly liveness: Liveness = LIVENESS,
  ) {
    this.keys = wireKeys(key);
  }

  private channel(url: string): Channel {
    const open = this.current.get(url);
    if (open?.usable) return open;
    // A session per channel: a channel ends only when its owner goes away or fails, and a session
    // that saw a GOAWAY could not carry a new one.
    const session = http2.connect(url);
    session.on('error', () => {});
    session.unref();
    const stream = session.request(
      { ':method': 'POST', ':path': FORWARD_PATH, [AUTH_HEADER]: channelAuth(this.keys, Date.now()) },
      { endStream: false },
    );
    const channel = new Channel(url, session, stream, this.keys, this.liveness, {
      retire: (retired) => {
        if (this.current.get(url) === retired) this.current.delete(url);
      },
      end: (ended) => {
        if (this.current.get(url) === ended) this.current.delete(url);
        this.channels.delete(ended);
      },
    });
    this.current.set(url, channel);
    this.channels.add(channel);
    return channel;
  }

  /**
   * Sends one request to the node at `url`, which holds the market's lease under `epoch`;
   * ForwardFailed says whether it may have been run there.
   */
  send(url: string, forwarded: ForwardedRequest, epoch?: number): Promise<ForwardAnswer> {
    const body = encodeWire(forwarded);
    const time = Date.now();
    const signature = signWire(this.keys.request, time, body);
    return new Promise((resolve, reject) => {
      let channel: Channel;
      try {
        channel = this.channel(url);
      } catch (error) {
        reject(new ForwardFailed(`cannot reach ${url}: ${(error as Error).message}`, false));
        return;
      }
      this.next += 1;
      const number = this.next;
      const timer = setTimeout(() => channel.expire(number), this.timeoutMs);
      timer.unref();
      channel.send(number, {
        market: forwarded.market,
        epoch,
        signature,
        line: `${number} ${time} ${signature} ${body}\n`,
        written: false,
        resolve,
        reject,
        timer,
      });
    });
  }

  /**
   * Ends the requests waiting at owners that do not answer and no longer hold the lease they were
   * sent under (see Channel.failWhereLeaseMoved); called after each read of the leases. Returns how many.
   */
  failWhereLeaseMoved(stillOwner: StillOwner): number {
    let failed = 0;
    for (const channel of [...this.channels]) failed += channel.failWhereLeaseMoved(stillOwner);
    return failed;
  }

  close(): void {
    for (const channel of [...this.channels]) {
      channel.fail('the node is closing');
      channel.session.destroy();
    }
    this.channels.clear();
    this.current.clear();
  }
}
