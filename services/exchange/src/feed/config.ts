import { boolean, ConfigError, integer } from '../settings/parse.js';

/** The live WebSocket feed at `/v3/ws` (src/feed/, docs/feed.md). */
export interface FeedConfig {
  /** Serve the feed (and keep its books up to date with every batch). @default true (`FEED_ENABLED`) */
  readonly enabled: boolean;
  /** Open feed connections at once; one more is refused with 503 before the upgrade. @default 10000 (`FEED_MAX_CONNECTIONS`) */
  readonly maxConnections: number;
  /**
   * Open feed connections at once from one client address (the request's `ip`); one more is refused
   * with 429 rate_limited before the upgrade. @default 100 (`FEED_MAX_CONNECTIONS_PER_ADDRESS`)
   */
  readonly maxConnectionsPerAddress: number;
  /**
   * How often the API keys of authenticated connections are checked; a key disabled or revoked since
   * its `auth` loses its private channels at the next check. @default 5000 (`FEED_KEY_CHECK_INTERVAL_MS`)
   */
  readonly keyCheckIntervalMs: number;
  /** Subscriptions one connection may hold. @default 50 (`FEED_MAX_SUBSCRIPTIONS`) */
  readonly maxSubscriptions: number;
  /** Largest client frame in bytes; a larger one closes the connection with 1009. @default 4096 (`FEED_MAX_FRAME_BYTES`) */
  readonly maxFrameBytes: number;
  /** Bytes queued for a client beyond which it is dropped as a slow consumer (4008). @default 1048576 (`FEED_MAX_BUFFERED_BYTES`) */
  readonly maxBufferedBytes: number;
  /** Sustained client frames per second; above it the connection is closed with 1008. @default 10 (`FEED_MESSAGES_PER_SECOND`) */
  readonly messagesPerSecond: number;
  /** Client frames allowed at once before the rate applies. @default 50 (`FEED_MESSAGE_BURST`) */
  readonly messageBurst: number;
  /** Shortest interval between two ticker frames of a market. @default 1000 (`FEED_TICKER_INTERVAL_MS`) */
  readonly tickerIntervalMs: number;
  /**
   * Committed batches whose frames each market keeps for clients that resume (`from_seq`), at least
   * (unless `resumeMaxBytes` is reached first). @default 10000 (`FEED_RESUME_FRAMES`)
   */
  readonly resumeFrames: number;
  /** Bytes those frames may hold per market at most. @default 67108864 (`FEED_RESUME_MAX_BYTES`, 64 MiB) */
  readonly resumeMaxBytes: number;
  /**
   * Order operations (`order.submit`...) of one connection in progress at once; one more is refused
   * with `too_many_operations`. @default 256 (`FEED_MAX_PENDING_OPERATIONS`)
   */
  readonly maxPendingOperations: number;
  /**
   * The share of the process's CPU the feed's writes to its subscribers may take while order entry
   * keeps it busy (0.01..1): after a round of writes that cost c, the next waits until the process
   * spent c x (1 / share - 1) on other work, and what committed meanwhile goes out in it
   * (src/feed/fan-out-pace.ts). 1: no wait. @default 0.1 (`FEED_FANOUT_SHARE`)
   */
  readonly fanOutShare: number;
  /**
   * The longest that wait (also when the process is idle). @default 100 (`FEED_FANOUT_MAX_DELAY_MS`).
   * With 1,000 subscribers a round costs about 10 ms, so the share's wait (9 x that of other work)
   * is longer than any cap a busy process reaches: the cap sets the rounds per second. At 50 the
   * fan-out added 1.6-1.75x to the server's CPU per order, at 100 1.1-1.3x, for about 70 ms more
   * delivery p50 (bench:feed, 2 Dec); 250 held frames 0.5-1 s p50 under load.
   */
  readonly fanOutMaxDelayMs: number;
}

export function feedConfig(env: NodeJS.ProcessEnv): FeedConfig {
  return Object.freeze({
    enabled: boolean(env, 'FEED_ENABLED', true),
    maxConnections: integer(env, 'FEED_MAX_CONNECTIONS', 10_000, 1, 1_000_000),
    maxConnectionsPerAddress: integer(env, 'FEED_MAX_CONNECTIONS_PER_ADDRESS', 100, 1, 1_000_000),
    keyCheckIntervalMs: integer(env, 'FEED_KEY_CHECK_INTERVAL_MS', 5_000, 20, 3_600_000),
    maxSubscriptions: integer(env, 'FEED_MAX_SUBSCRIPTIONS', 50, 1, 10_000),
    maxFrameBytes: integer(env, 'FEED_MAX_FRAME_BYTES', 4_096, 256, 1_048_576),
    maxBufferedBytes: integer(env, 'FEED_MAX_BUFFERED_BYTES', 1_048_576, 16_384, 1_073_741_824),
    messagesPerSecond: integer(env, 'FEED_MESSAGES_PER_SECOND', 10, 1, 100_000),
    messageBurst: integer(env, 'FEED_MESSAGE_BURST', 50, 1, 100_000),
    tickerIntervalMs: integer(env, 'FEED_TICKER_INTERVAL_MS', 1_000, 50, 3_600_000),
    resumeFrames: integer(env, 'FEED_RESUME_FRAMES', 10_000, 0, 1_000_000),
    resumeMaxBytes: integer(env, 'FEED_RESUME_MAX_BYTES', 64 * 1024 * 1024, 0, 16 * 1024 * 1024 * 1024),
    maxPendingOperations: integer(env, 'FEED_MAX_PENDING_OPERATIONS', 256, 1, 100_000),
    fanOutShare: share(env, 'FEED_FANOUT_SHARE', 0.1),
    fanOutMaxDelayMs: integer(env, 'FEED_FANOUT_MAX_DELAY_MS', 100, 1, 10_000),
  });
}

/** A share between 0.01 and 1 (a decimal number), or the setting's error. */
function share(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = /^(0(\.\d+)?|1(\.0+)?)$/.test(raw.trim()) ? Number(raw) : Number.NaN;
  if (!(value >= 0.01 && value <= 1))
    throw new ConfigError(name, `expected a share between 0.01 and 1, got "${raw}"`);
  return value;
}

/** The feed settings with every default (tests and in-process apps). */
export function defaultFeedConfig(): FeedConfig {
  return feedConfig({});
}
