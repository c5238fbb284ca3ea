import type { Socket } from 'node:net';
import type { RawData, WebSocket } from 'ws';
import type { AuthDeps } from '../auth/authenticate.js';
import type { CandleChannel } from '../candles/channel.js';
import { databaseUnreachable } from '../db/unreachable.js';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import { authenticateFrame } from './auth.js';
import { type AnyFeedErrorName, CLOSE, type FeedError, feedErrorCode } from './errors.js';
import type { FeedHub } from './hub.js';
import type { KeyHolder, KeyWatch } from './key-watch.js';
import { MessageBudget } from './message-budget.js';
import { OPERATIONS } from './operations.js';
import type { OutgoingFrame, Peer } from './peer.js';
import {
  type ClientFrame,
  isSequenced,
  type OperationId,
  parseClientFrame,
  type Subscription,
  subscriptionKey,
} from './protocol.js';
import { SendQueue } from './send-queue.js';
import type { TickerRound } from './tickers.js';
import { textFrame } from './ws-frame.js';

export interface ConnectionLimits {
  /** Subscriptions one connection may hold. */
  readonly maxSubscriptions: number;
  /** Bytes queued for a connection beyond which it is dropped as a slow consumer. */
  readonly maxBufferedBytes: number;
  /** Sustained client frames per second, and how many may come at once (order operations aside). */
  readonly messagesPerSecond: number;
  readonly messageBurst: number;
  /** Order operations of one connection answered at once at most (more: `too_many_operations`). */
  readonly maxPendingOperations: number;
}

export interface ConnectionDeps {
  readonly hub: FeedHub;
  readonly tickers: TickerRound;
  readonly candles: CandleChannel;
  readonly auth: AuthDeps;
  readonly keys: KeyWatch;
  readonly limits: ConnectionLimits;
  /** What the order operations' handlers take (the REST routes' dependencies). */
  readonly routes: RouteDeps;
  /** The request limits of a route for an operation (operation-limits.ts). */
  readonly operationLimits: (route: string, address: string, keyId: number) => Promise<ApiError | undefined>;
  /** The client's address (the HTTP request's `ip`): the per-address request limits. */
  readonly address: string;
  readonly now: () => number;
  readonly onError: (error: unknown) => void;
}

function* framed(payloads: Iterable<Buffer>): Generator<Buffer> {
  for (const payload of payloads) yield textFrame(payload);
}

type SubscribeFrame = Extract<ClientFrame, { readonly subscription: Subscription }>;

/** How long a dropped connection may take to close before its socket is destroyed. */
const CLOSE_GRACE_MS = 1_000;

/**
 * One client of the feed: its subscriptions, its authenticated account, the budget of frames it may
 * send, its order operations, and the bounded queue of frames sent to it (a client that does not
 * read is dropped once `maxBufferedBytes` are queued, so it never holds more memory than that).
 */
export class FeedConnection implements Peer, KeyHolder {
  private readonly subscriptions = new Map<string, Subscription>();
  private accountId: number | undefined;
  private keyId: number | undefined;
  private scopes: readonly string[] = [];
  private authenticating = false;
  private readonly budget: MessageBudget;
  private closed = false;
  private pendingOperations = 0;
  /** Frames framed once for many connections, written to the TCP socket under the WebSocket. */
  private readonly queue: SendQueue | undefined;

  constructor(
    private readonly socket: WebSocket,
    private readonly deps: ConnectionDeps,
    /**
     * The TCP socket under the WebSocket (the upgraded request's): frames framed once for many
     * connections (ws-frame.ts) are written to it directly, between the messages `ws` writes itself
     * (it writes each at once: no compression is negotiated).
     */
    raw?: Socket,
  ) {
    this.queue = raw ? new SendQueue(raw, deps.limits.maxBufferedBytes) : undefined;
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
    if ((this.queue?.pending ?? this.socket.bufferedAmount) > this.deps.limits.maxBufferedBytes) {
      this.deps.hub.dropped.slow_consumer += 1;
      this.drop(CLOSE.slowConsumer, 'slow consumer: send buffer full');
      return;
    }
    // A text frame even when given as bytes (JSON, UTF-8).
    this.socket.send(frame, { binary: false });
  }

  deliverFramed(frames: readonly Buffer[], payloads: readonly Buffer[]): void {
    if (!this.queue || this.closed || this.socket.readyState !== this.socket.OPEN) {
      for (const payload of payloads) this.deliver(payload);
      return;
    }
    if (!this.queue.push(frames)) {
      this.deps.hub.dropped.slow_consumer += 1;
      this.drop(CLOSE.slowConsumer, 'slow consumer: send buffer full');
    }
  }

  replay(payloads: Iterable<Buffer>): void {
    if (!this.queue) {
      for (const payload of payloads) this.deliver(payload);
      return;
    }
    this.queue.replay(framed(payloads));
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
   * stay; order operations need a new `auth`.
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
    this.scopes = [];
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

  /** An order operation's refusal: `{"id","error":{"code","name","message"}}` with the REST code. */
  private operationError(id: OperationId | undefined, error: FeedError): void {
    this.deliver(
      JSON.stringify({
        ...(id === undefined ? {} : { id }),
        error: { code: feedErrorCode(error.name), name: error.name, message: error.message },
      }),
    );
  }

  private receive(data: RawData, isBinary: boolean): void {
    if (this.closed) return;
    if (isBinary) {
      if (!this.spend()) return;
      this.error({ name: 'malformed_frame', message: 'frames are JSON text' });
      return;
    }
    const parsed = parseClientFrame(data.toString());
    // Order operations count against the routes' request limits instead of the frame budget.
    const operation = parsed.ok ? parsed.frame.op === 'order' : parsed.operation === true;
    if (!operation && !this.spend()) return;
    if (!parsed.ok) {
      if (parsed.operation) this.operationError(parsed.id, parsed.error);
      else this.error(parsed.error, typeof parsed.id === 'number' ? parsed.id : undefined);
      return;
    }
    const frame = parsed.frame;
    if (frame.op === 'order') {
      this.operate(frame);
      return;
    }
    this.handle(frame).catch((error: unknown) => {
      this.deps.onError(error);
      this.error({ name: 'unavailable', message: 'the request could not be served; try again' }, frame.id);
    });
  }

  /** Takes a frame from the budget; over it, the client hears why and is closed (1008). */
  private spend(): boolean {
    if (this.budget.take(this.deps.now())) return true;
    this.error({
      name: 'too_many_messages',
      message: `more than ${this.deps.limits.messagesPerSecond} frames per second`,
    });
    this.drop(CLOSE.policy, 'too many messages');
    return false;
  }

  private async handle(frame: Exclude<ClientFrame, { op: 'order' }>): Promise<void> {
    switch (frame.op) {
      case 'ping':
        this.reply({ event: 'pong' }, frame.id);
        return;
      case 'auth':
        return this.authenticate(frame);
      case 'subscribe':
        return this.subscribe(frame);
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
      this.scopes = outcome.scopes;
      this.deps.keys.add(outcome.keyId, this);
      this.reply({ event: 'authenticated' }, frame.id);
    } finally {
      this.authenticating = false;
    }
  }

  /**
   * An order operation (operations.ts): its route's scope, request limits and body check, then its
   * handler; answered `{"id","result"}` or `{"id","error"}` when it is done, in the order operations
   * finish (each answer names its operation).
   */
  private operate(frame: Extract<ClientFrame, { op: 'order' }>): void {
    const refuse = (name: AnyFeedErrorName, message: string) =>
      this.operationError(frame.id, { name, message });
    const operation = Object.hasOwn(OPERATIONS, frame.name) ? OPERATIONS[frame.name] : undefined;
    if (!operation) {
      refuse('unknown_op', `unknown operation ${frame.name}; known: ${Object.keys(OPERATIONS).join(', ')}`);
      return;
    }
    const accountId = this.accountId;
    const keyId = this.keyId;
    if (accountId === undefined || keyId === undefined) {
      refuse('not_authenticated', `${frame.name} needs an auth frame first`);
      return;
    }
    if (!this.scopes.includes(operation.scope)) {
      refuse('scope_missing', `this API key lacks the "${operation.scope}" scope`);
      return;
    }
    if (this.pendingOperations >= this.deps.limits.maxPendingOperations) {
      refuse(
        'too_many_operations',
        `at most ${this.deps.limits.maxPendingOperations} operations of one connection are answered at once`,
      );
      return;
    }
    this.pendingOperations += 1;
    void (async () => {
      try {
        const limited = await this.deps.operationLimits(operation.route, this.deps.address, keyId);
        if (limited) throw limited;
        const checked = operation.check(frame.params);
        if (!checked.ok) throw new ApiError('validation_failed', checked.message);
        const result = await operation.run(this.deps.routes, { accountId, keyId: this.keyId }, frame.params);
        this.deliver(JSON.stringify({ id: frame.id, result }));
      } catch (error) {
        if (error instanceof ApiError) refuse(error.errorName, error.message);
        else if (databaseUnreachable(error))
          refuse('unavailable', 'the database is out of reach; try again shortly');
        else {
          this.deps.onError(error);
          refuse('internal', 'internal error');
        }
      } finally {
        this.pendingOperations -= 1;
      }
    })();
  }

  private async subscribe(frame: SubscribeFrame): Promise<void> {
    const { subscription, id } = frame;
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
    } else if (frame.fromSeqs) {
      const unknown = Object.keys(frame.fromSeqs).find((market) => !this.deps.hub.market(market));
      if (unknown !== undefined) {
        refuse('unknown_market', `unknown market "${unknown}" in from_seqs`);
        return;
      }
    }
    const resuming = frame.fromSeq !== undefined || frame.fromSeqs !== undefined;
    // A resume starts the subscription over: the frames after the number come from the journal.
    if (again && resuming) this.leave(subscription);
    this.subscriptions.set(key, subscription);
    let resumed: boolean | undefined;
    if (resuming) resumed = this.resume(frame);
    if (!resumed && (!again || resuming)) this.join(subscription);
    this.reply({ event: 'subscribed', ...subscription, ...this.position(frame, resumed) }, id);
    // Subscribing again to a book is how a client resyncs after a gap: a fresh snapshot each time.
    if ((subscription.channel === 'book' || subscription.channel === 'book_l3') && !resumed)
      this.deps.hub.sendSnapshot(
        this,
        subscription.market,
        subscription.channel,
        resuming ? false : undefined,
      );
    if (subscription.channel === 'ticker') {
      const text = await this.deps.tickers.current(subscription.market);
      if (this.subscriptions.has(key)) this.deliver(text);
    }
  }

  /** Where the subscription starts (`subscribed` answer): `seq`, or `seqs` per market, and `resumed`. */
  private position(frame: SubscribeFrame, resumed: boolean | undefined): Record<string, unknown> {
    const subscription = frame.subscription;
    const flag = resumed === undefined ? {} : { resumed };
    if ('market' in subscription) {
      if (!isSequenced(subscription.channel)) return {};
      return { seq: resumed ? frame.fromSeq : this.deps.hub.position(subscription.market), ...flag };
    }
    return { seqs: { ...this.deps.hub.positions(), ...(resumed ? frame.fromSeqs : {}) }, ...flag };
  }

  /** A subscription with `from_seq`/`from_seqs`: whether the frames after it could all be queued. */
  private resume(frame: SubscribeFrame): boolean {
    const subscription = frame.subscription;
    if ('market' in subscription) {
      if (!isSequenced(subscription.channel) || frame.fromSeq === undefined) return false;
      return this.deps.hub.resume(this, subscription.channel, subscription.market, frame.fromSeq);
    }
    if (frame.fromSeqs === undefined) return false;
    return this.deps.hub.resumePrivate(this, subscription.channel, this.accountId!, frame.fromSeqs);
  }

  private join(subscription: Subscription): void {
    if (subscription.channel === 'candles') {
      const market = this.deps.hub.market(subscription.market)!;
      this.deps.candles.add(this, market, subscription.resolution);
    } else if ('market' in subscription)
      this.deps.hub.addPublic(this, subscription.channel, subscription.market);
    else this.deps.hub.addPrivate(this, subscription.channel, this.accountId!);
  }

  private leave(subscription: Subscription): void {
    if (subscription.channel === 'candles')
      this.deps.candles.remove(this, subscription.market, subscription.resolution);
    else if ('market' in subscription)
      this.deps.hub.removePublic(this, subscription.channel, subscription.market);
    else this.deps.hub.removePrivate(this, subscription.channel, this.accountId!);
  }
}
