import websocket from '@fastify/websocket';
import { CandleChannel } from '../candles/channel.js';
import type { FeedConfig } from '../config.js';
import { ApiError } from '../errors.js';
import type { RouteDeps } from '../http/deps.js';
import type { App } from '../http/typed.js';
import type { RequestLimitsOptions } from '../limits/register.js';
import { FeedConnection } from './connection.js';
import { CLOSE } from './errors.js';
import { FeedHub } from './hub.js';
import { KeyWatch } from './key-watch.js';
import { operationLimits } from './operation-limits.js';
import { TickerRound } from './tickers.js';

export const FEED_PATH = '/v3/ws';

/** Close code of a connection accepted over the limit (RFC 6455 1013 try again later). */
const TRY_AGAIN_LATER = 1013;

/**
 * Serves the live feed at `/v3/ws` (docs/feed.md). Call after the order service started and before
 * any order is taken, so the feed's books start from the committed ones.
 */
export async function registerFeed(
  app: App,
  deps: RouteDeps,
  config: FeedConfig,
  /** The REST routes' request limits, which the order operations count against too. */
  requestLimits?: RequestLimitsOptions,
): Promise<FeedHub> {
  const hub = new FeedHub(
    deps.orders,
    deps.reference,
    { frames: config.resumeFrames, maxBytes: config.resumeMaxBytes },
    { share: config.fanOutShare, maxDelayMs: config.fanOutMaxDelayMs },
    (error) => app.log.error({ err: error }, 'feed order-by-order book started over from the engine'),
  );
  hub.start();
  const candles = new CandleChannel(
    deps.db,
    deps.orders.commits,
    deps.now,
    (frame, peers) => hub.send(frame, peers as Iterable<FeedConnection>),
    (error) => app.log.error({ err: error }, 'feed candle read failed'),
  );
  candles.start();
  const limitOperation = operationLimits(requestLimits);
  const tickers = new TickerRound(
    hub,
    (now) => deps.marketStats.summaries(now),
    (id, now) => deps.marketStats.version(id, now),
    deps.now,
    config.tickerIntervalMs,
    (error) => app.log.error({ err: error }, 'feed ticker round failed'),
  );
  tickers.start();
  const keys = new KeyWatch(deps.db, config.keyCheckIntervalMs, (error) =>
    app.log.error({ err: error }, 'feed key check failed'),
  );
  keys.start();
  const connections = new Set<FeedConnection>();
  /** Open connections per client address (FEED_MAX_CONNECTIONS_PER_ADDRESS). */
  const perAddress = new Map<string, number>();
  await app.register(websocket, {
    options: { maxPayload: config.maxFrameBytes },
    // Shutdown: every client hears 1001 going away (instead of the plugin's default close).
    preClose: (done) => {
      for (const connection of connections) connection.close(CLOSE.goingAway, 'server shutting down');
      done();
    },
  });
  app.addHook('onClose', async () => {
    candles.stop();
    tickers.stop();
    keys.stop();
    hub.stop();
  });
  const limits = {
    maxSubscriptions: config.maxSubscriptions,
    maxBufferedBytes: config.maxBufferedBytes,
    messagesPerSecond: config.messagesPerSecond,
    messageBurst: config.messageBurst,
    maxPendingOperations: config.maxPendingOperations,
  };
  app.get(
    FEED_PATH,
    {
      websocket: true,
      schema: {
        tags: ['feed'],
        summary:
          'Live feed (WebSocket, docs/feed.md): trades, book and order-by-order book with checksums, tickers, candles, own orders, balances and fills, resume by sequence number, order entry',
      },
      // Refused before the upgrade, as a plain HTTP error in the documented shape.
      preValidation: async (request) => {
        if (connections.size >= config.maxConnections)
          throw new ApiError('unavailable', `the feed serves at most ${config.maxConnections} connections`);
        if ((perAddress.get(request.ip) ?? 0) >= config.maxConnectionsPerAddress)
          throw new ApiError(
            'rate_limited',
            `the feed serves at most ${config.maxConnectionsPerAddress} connections per client address`,
          );
      },
    },
    (socket, request) => {
      // Upgrades that passed the checks at the same time: the limits hold here.
      const address = request.ip;
      const fromAddress = perAddress.get(address) ?? 0;
      if (connections.size >= config.maxConnections || fromAddress >= config.maxConnectionsPerAddress) {
        socket.close(TRY_AGAIN_LATER, 'too many connections');
        return;
      }
      perAddress.set(address, fromAddress + 1);
      const connection = new FeedConnection(
        socket,
        {
          hub,
          tickers,
          candles,
          auth: deps.auth,
          keys,
          limits,
          routes: deps,
          operationLimits: limitOperation,
          address,
          now: deps.now,
          onError: (error) => app.log.error({ err: error }, 'feed frame failed'),
        },
        request.raw.socket,
      );
      connections.add(connection);
      socket.on('close', () => {
        connections.delete(connection);
        const left = (perAddress.get(address) ?? 1) - 1;
        if (left === 0) perAddress.delete(address);
        else perAddress.set(address, left);
      });
    },
  );
  return hub;
}
