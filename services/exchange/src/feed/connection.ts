import type { RawData, WebSocket } from 'ws';
import type { AuthDeps } from '../auth/authenticate.js';
import { authenticateFrame } from './auth.js';
import { type AnyFeedErrorName, CLOSE, type FeedError, feedErrorCode } from './errors.js';
import type { FeedHub } from './hub.js';
import type { KeyHolder, KeyWatch } from './key-watch.js';
import { MessageBudget } from './message-budget.js';
import type { OutgoingFrame, Peer } from './peer.js';
import { type ClientFrame, parseClientFrame, type Subscription, subscriptionKey } from './protocol.js';
import type { TickerRound } from './tickers.js';

export interface ConnectionLimits {
  /** Subscriptions one connection may hold. */
  readonly maxSubscriptions: number;
  /** Bytes queued for a connection beyond which it is dropped as a slow consumer. */
  readonly maxBufferedBytes: number;
  /** Sustained client frames per second, and how many may come at once. */
  readonly messagesPerSecond: number;
  readonly messageBurst: number;
}

export interface ConnectionDeps {
  readonly hub: FeedHub;
  readonly tickers: TickerRound;
  readonly auth: AuthDeps;
  readonly keys: KeyWatch;
  readonly limits: ConnectionLimits;
  readonly now: () => number;
  readonly onError: (error: unknown) => void;
}

/** How long a dropped connection may take to close before its socket is destroyed. */
const CLOSE_GRACE_MS = 1_000;

/**
 * One client of the feed: its subscriptions, its authenticated account, the budget of frames it may
 * send, and the bounded queue of frames sent to it (a client that does not read is dropped once
 * `maxBufferedBytes` are queued, so it never holds more memory than that).
 */
export class FeedConnection implements Peer, KeyHolder {
  private readonly subscriptions = new Map<string, Subscription>();
  private accountId: number | undefined;
  private keyId: number | undefined;
  private authenticating = false;
  private readonly budget: MessageBudget;
  private closed = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly deps: ConnectionDeps,
  ) {
    this.budget = new MessageBudget(deps.limits.messagesPerSecond, deps.limits.messageBurst, deps.now());
    socket.on('message', (data, isBinary) => this.receive(data, isBinary));
    socket.on('close', () => this.release());
    // Protocol errors (a frame over maxPayload, bad framing): ws closes the socket itself (1009, 1002).
    socket.on('error', () => this.release());
  }

  deliver(frame: OutgoingFrame): void {
    if (this.closed) {
      this.deps.hub.dropped.closed += 1;
      return;
    }
    if (this.socket.bufferedAmount > this.deps.limits.maxBufferedBytes) {
      this.deps.hub.dropped.slow_consumer += 1;
      this.drop(CLOSE.slowConsumer, 'slow consumer: send buffer full');
      return;
    }
    // A text frame even when given as bytes (JSON, UTF-8).
    this.socket.send(frame, { binary: false });
  }

  /** Closes the connection (server shutdown). */
  close(code: number, reason: string): void {
    this.drop(code, reason);
  }

  private drop(code: number, reason: string): void {
    if (this.closed) return;
    this.release();
    this.socket.close(code, reason);
    // A client that does not read never answers the close: free its socket anyway.
    setTimeout(() => this.socket.terminate(), CLOSE_GRACE_MS).unref();
  }

  /** Leaves every channel; idempotent. */
  private release(): void {
    if (this.closed) return;
    this.closed = true;
    for (const subscription of this.subscriptions.values()) this.leave(subscription);
    this.subscriptions.clear();
    if (this.keyId !== undefined) this.deps.keys.remove(this.keyId, this);
  }

  /**
   * The key of this connection's `auth` was disabled or revoked (KeyWatch): its private channels
   * close, the client hears `key_disabled`, and it may `auth` again with another key. Public channels
   * stay.
   */
  keyWithdrawn(): void {
    if (this.closed || this.accountId === undefined) return;
    const closed: string[] = [];
    for (const [key, subscription] of this.subscriptions) {
      if ('market' in subscription) continue;
      this.leave(subscription);
      this.subscriptions.delete(key);
      closed.push(subscription.channel);
    }
    this.accountId = undefined;
    this.keyId = undefined;
    this.error({
      name: 'key_disabled',
      message: `the API key of this connection was disabled or revoked; private channels closed: ${closed.join(', ') || 'none'}`,
    });
  }

  private error(error: FeedError, id?: number): void {
    this.deliver(
      JSON.stringify({
        event: 'error',
        code: feedErrorCode(error.name),
        name: error.name,
        message: error.message,
        ...(id === undefined ? {} : { id }),
      }),
    );
  }

  private reply(body: Record<string, unknown>, id: number | undefined): void {
    this.deliver(JSON.stringify(id === undefined ? body : { ...body, id }));
  }

  private receive(data: RawData, isBinary: boolean): void {
    if (this.closed) return;
    if (!this.budget.take(this.deps.now())) {
      this.error({
        name: 'too_many_messages',
        message: `more than ${this.deps.limits.messagesPerSecond} frames per second`,
      });
      this.drop(CLOSE.policy, 'too many messages');
      return;
    }
    if (isBinary) {
      this.error({ name: 'malformed_frame', message: 'frames are JSON text' });
      return;
    }
    const parsed = parseClientFrame(data.toString());
    if (!parsed.ok) {
      this.error(parsed.error, parsed.id);
      return;
    }
    this.handle(parsed.frame).catch((error: unknown) => {
      this.deps.onError(error);
      this.error(
        { name: 'unavailable', message: 'the request could not be served; try again' },
        parsed.frame.id,
      );
    });
  }

  private async handle(frame: ClientFrame): Promise<void> {
    switch (frame.op) {
      case 'ping':
        this.reply({ event: 'pong' }, frame.id);
        return;
      case 'auth':
        return this.authenticate(frame);
      case 'subscribe':
        return this.subscribe(frame.subscription, frame.id);
      case 'unsubscribe': {
        const key = subscriptionKey(frame.subscription);
        const held = this.subscriptions.get(key);
        if (held) {
          this.subscriptions.delete(key);
          this.leave(held);
        }
        this.reply({ event: 'unsubscribed', ...frame.subscription }, frame.id);
        return;
      }
    }
  }

  private async authenticate(frame: Extract<ClientFrame, { op: 'auth' }>): Promise<void> {
    if (this.accountId !== undefined || this.authenticating) {
      this.error(
        { name: 'already_authenticated', message: 'this connection is already authenticated' },
        frame.id,
      );
      return;
    }
    this.authenticating = true;
    try {
      const outcome = await authenticateFrame(this.deps.auth, frame);
      if (!outcome.ok) {
        this.error(outcome.error, frame.id);
        return;
      }
      if (this.closed) return;
      this.accountId = outcome.accountId;
      this.keyId = outcome.keyId;
      this.deps.keys.add(outcome.keyId, this);
      this.reply({ event: 'authenticated' }, frame.id);
    } finally {
      this.authenticating = false;
    }
  }

  private async subscribe(subscription: Subscription, id: number | undefined): Promise<void> {
    const refuse = (name: AnyFeedErrorName, message: string) => this.error({ name, message }, id);
    const key = subscriptionKey(subscription);
    const again = this.subscriptions.has(key);
    if (!again && this.subscriptions.size >= this.deps.limits.maxSubscriptions) {
      refuse(
        'too_many_subscriptions',
        `at most ${this.deps.limits.maxSubscriptions} subscriptions per connection`,
      );
      return;
    }
    if ('market' in subscription) {
      if (!this.deps.hub.market(subscription.market)) {
        refuse('unknown_market', `unknown market "${subscription.market}"`);
        return;
      }
    } else if (this.accountId === undefined) {
      refuse('not_authenticated', `channel ${subscription.channel} needs an auth frame first`);
      return;
    }
    if (!again) {
      this.subscriptions.set(key, subscription);
      this.join(subscription);
    }
    // Where the subscription starts in the committed log: every frame with a greater `seq` follows.
    let position: Record<string, unknown> = {};
    if (subscription.channel === 'trades' || subscription.channel === 'book')
      position = { seq: this.deps.hub.position(subscription.market) };
    else if (!('market' in subscription)) position = { seqs: this.deps.hub.positions() };
    this.reply({ event: 'subscribed', ...subscription, ...position }, id);
    // Subscribing again to a book is how a client resyncs after a gap: a fresh snapshot each time.
    if (subscription.channel === 'book') this.deps.hub.sendSnapshot(this, subscription.market);
    if (subscription.channel === 'ticker') {
      const text = await this.deps.tickers.current(subscription.market);
      if (this.subscriptions.has(key)) this.deliver(text);
    }
  }

  private join(subscription: Subscription): void {
    if ('market' in subscription) this.deps.hub.addPublic(this, subscription.channel, subscription.market);
    else this.deps.hub.addPrivate(this, subscription.channel, this.accountId!);
  }

  private leave(subscription: Subscription): void {
    if ('market' in subscription) this.deps.hub.removePublic(this, subscription.channel, subscription.market);
    else this.deps.hub.removePrivate(this, subscription.channel, this.accountId!);
  }
}
