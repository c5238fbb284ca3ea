import type { Logger } from 'pino';
import type { RedisClient } from './redis.js';

/** A message on the fleet's channel. */
export type FleetMessage =
  | { readonly kind: 'cache'; readonly from: string; readonly epoch: number }
  | {
      readonly kind: 'queue';
      readonly from: string;
      readonly event: 'queued' | 'sent' | 'rejected' | 'retry' | 'retried' | 'discarded';
      readonly id: string;
      readonly at?: string;
      readonly upstreamStatus?: number;
      readonly message?: string;
    }
  | { readonly kind: 'flush'; readonly from: string };

/**
 * The fleet's pub/sub channel (`{prefix}:events`), on a connection of its own (a subscribed Redis
 * connection can send nothing else). Scripts publish from inside Redis, so a message is sent exactly
 * when the change it announces is made. Listeners get every message, their own instance's included.
 */
export class FleetEvents {
  private readonly listeners: Array<(message: FleetMessage) => void> = [];
  private readonly linkListeners: Array<(subscribed: boolean) => void> = [];
  private linked = false;

  constructor(
    subscriber: RedisClient,
    /** The connection that publishes (a subscribed one cannot). */
    private readonly publisher: RedisClient | undefined,
    readonly channel: string,
    private readonly logger: Logger,
  ) {
    subscriber.on('message', (channelName: string, text: string) => {
      if (channelName !== channel) return;
      let message: FleetMessage;
      try {
        message = JSON.parse(text) as FleetMessage;
      } catch {
        return;
      }
      for (const listener of this.listeners) {
        try {
          listener(message);
        } catch (error) {
          this.logger.error({ err: error }, 'fleet event listener failed');
        }
      }
    });
    // (Re)subscribes on every connection: ioredis re-subscribes by itself after a reconnect, but a
    // client that never connected at start has nothing to re-subscribe yet.
    const subscribe = () => {
      subscriber.subscribe(channel).then(
        () => this.link(true),
        (error: unknown) => {
          this.logger.warn({ err: error }, 'could not subscribe to the fleet channel');
        },
      );
    };
    subscriber.on('ready', subscribe);
    if (subscriber.status === 'ready') subscribe();
    // Messages published while the connection is down are lost to this instance: listeners that keep
    // state by them (the cache's near copy) are told at once.
    for (const event of ['close', 'end', 'reconnecting']) subscriber.on(event, () => this.link(false));
  }

  /** True while the channel is subscribed: no message published now can be missed. */
  get subscribed(): boolean {
    return this.linked;
  }

  on(listener: (message: FleetMessage) => void): void {
    this.listeners.push(listener);
  }

  /** Told each time the subscription is confirmed (true) and each time its connection drops (false). */
  onLink(listener: (subscribed: boolean) => void): void {
    this.linkListeners.push(listener);
    if (this.linked) listener(true);
  }

  private link(subscribed: boolean): void {
    if (!subscribed && !this.linked) return;
    this.linked = subscribed;
    for (const listener of this.linkListeners) {
      try {
        listener(subscribed);
      } catch (error) {
        this.logger.error({ err: error }, 'fleet link listener failed');
      }
    }
  }

  /** Publishes a message (scripts publish their own from inside Redis). */
  async publish(message: FleetMessage): Promise<void> {
    await this.publisher?.publish(this.channel, JSON.stringify(message));
  }
}
