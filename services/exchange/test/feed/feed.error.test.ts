import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { usePostgresTarget } from '../support/targets.js';
import { useFeedApp } from './setup.js';
import { type FeedClient, pollUntil } from './ws-client.js';

describe('live feed: bad input and limits (postgres)', () => {
  const target = usePostgresTarget();
  const feed = useFeedApp(target, {
    maxConnections: 3,
    maxSubscriptions: 3,
    maxFrameBytes: 512,
    messagesPerSecond: 5,
    messageBurst: 10,
  });

  it('malformed, binary and unknown frames get an error frame and the connection stays usable', async () => {
    const client = await feed.connect();
    const errorAfter = async (frame: unknown) => {
      const from = client.frames.length;
      client.send(frame);
      return client.next((f) => f.event === 'error', from);
    };
    expect(await errorAfter('{not json')).toMatchObject({ code: 3300, name: 'malformed_frame' });
    expect(await errorAfter('[]')).toMatchObject({ code: 3300 });
    const binary = client.frames.length;
    client.socket.send(Buffer.from([1, 2, 3]));
    expect(await client.next((f) => f.event === 'error', binary)).toMatchObject({ name: 'malformed_frame' });
    expect(await client.request({ op: 'hello', id: 1 })).toMatchObject({ code: 3301, name: 'unknown_op' });
    expect(
      await client.request({ op: 'subscribe', channel: 'depth', market: 'btcusdt', id: 2 }),
    ).toMatchObject({
      code: 3302,
      name: 'unknown_channel',
    });
    expect(
      await client.request({ op: 'subscribe', channel: 'book', market: 'dogeuah', id: 3 }),
    ).toMatchObject({
      code: 1007,
      name: 'unknown_market',
    });
    expect(await client.request({ op: 'ping', id: 4 })).toEqual({ event: 'pong', id: 4 });
    client.close();
    await client.whenClosed();
  });

  it('at most maxSubscriptions per connection; subscribing again to one held is no new subscription', async () => {
    const client = await feed.connect();
    for (const [id, market] of [
      [1, 'btcusdt'],
      [2, 'ethusdt'],
      [3, 'btcuah'],
    ] as const)
      expect((await client.request({ op: 'subscribe', channel: 'trades', market, id })).event).toBe(
        'subscribed',
      );
    expect(
      await client.request({ op: 'subscribe', channel: 'trades', market: 'ethuah', id: 4 }),
    ).toMatchObject({
      code: 3303,
      name: 'too_many_subscriptions',
    });
    expect(
      (await client.request({ op: 'subscribe', channel: 'trades', market: 'btcusdt', id: 5 })).event,
    ).toBe('subscribed');
    await client.request({ op: 'unsubscribe', channel: 'trades', market: 'btcuah', id: 6 });
    expect(
      (await client.request({ op: 'subscribe', channel: 'trades', market: 'ethuah', id: 7 })).event,
    ).toBe('subscribed');
    client.close();
    await client.whenClosed();
  });

  it('a frame over maxFrameBytes closes the connection with 1009', async () => {
    const client = await feed.connect();
    client.send({ op: 'ping', pad: 'x'.repeat(600) });
    expect((await client.whenClosed()).code).toBe(1009);
  });

  it('a flood of subscribe frames gets too_many_messages and the connection closed with 1008', async () => {
    const client = await feed.connect();
    for (let i = 0; i < 200; i += 1)
      client.send({ op: 'subscribe', channel: 'book', market: 'btcusdt', id: i });
    expect(await client.whenClosed()).toEqual({ code: 1008, reason: 'too many messages' });
    expect(client.frames.at(-1)).toMatchObject({ event: 'error', code: 3306, name: 'too_many_messages' });
    // Answered: the burst of 10 (each subscribed + snapshot), then the error; nothing after it.
    expect(client.frames.filter((f) => f.event === 'subscribed').length).toBeLessThanOrEqual(11);
  });

  it('at most maxConnections: one more is refused with 503 before the upgrade; a closed one frees its place', async () => {
    const clients = [await feed.connect(), await feed.connect(), await feed.connect()];
    await expect(feed.connect()).rejects.toThrow('upgrade refused: 503');
    clients[0]!.close();
    await clients[0]!.whenClosed();
    // The server sees the close a moment after the client: poll with a deadline.
    const deadline = Date.now() + 10_000;
    let fourth: FeedClient | undefined;
    while (!fourth) {
      fourth = await feed.connect().catch((error: Error) => {
        if (Date.now() > deadline) throw error;
        return undefined;
      });
    }
    expect(await fourth.request({ op: 'ping', id: 1 })).toEqual({ event: 'pong', id: 1 });
    for (const client of [fourth, clients[1]!, clients[2]!]) {
      client.close();
      await client.whenClosed();
    }
  });
});

describe('live feed: slow consumers (postgres)', () => {
  const target = usePostgresTarget();
  const metrics = new Registry();
  const feed = useFeedApp(
    target,
    {
      maxBufferedBytes: 16_384,
      messagesPerSecond: 100_000,
      messageBurst: 100_000,
    },
    undefined,
    metrics,
  );

  it('a client that stops reading is dropped once its send buffer is full, counted; the others go on', async () => {
    // A book of 40 levels makes each snapshot about 1 kB.
    const traders = [await feed.trader(), await feed.trader(), await feed.trader(), await feed.trader()];
    await Promise.all(
      traders.map(async (trader, t) => {
        for (let i = 0; i < 10; i += 1) {
          const response = await trader.http.v3('/v3/auth/w/order/submit', {
            symbol: 'btcusdt',
            type: 'limit',
            amount: '0.001',
            price: String(30_000 + t * 100 + i),
          });
          expect(response.statusCode, response.body).toBe(200);
        }
      }),
    );
    const healthy = await feed.connect();
    await healthy.request({ op: 'subscribe', channel: 'book', market: 'btcusdt', id: 1 });
    const slow = await feed.connect();
    slow.socket.pause();
    // Each subscribe answers with a snapshot: 20,000 of them are 20 MB, far more than the kernel's
    // socket buffers hold for a client that does not read, so the server's own buffer must grow.
    const open = () => feed.app().websocketServer.clients.size;
    const before = open();
    for (let i = 0; i < 20_000; i += 1) slow.send({ op: 'subscribe', channel: 'book', market: 'btcusdt' });
    // The server drops it while it still does not read (its connection leaves the server's list).
    await pollUntil(() => open() < before, 30_000, 'slow client dropped');
    slow.socket.resume();
    const closed = await slow.whenClosed(30_000);
    // 4008 when the close frame got through before the socket was destroyed, 1006 otherwise.
    expect([4008, 1006]).toContain(closed.code);
    expect(slow.frames.filter((f) => f.event === 'snapshot').length).toBeLessThan(20_000);
    expect(await healthy.request({ op: 'ping', id: 2 })).toEqual({ event: 'pong', id: 2 });
    healthy.close();
    const text = await metrics.metrics();
    expect(text).toContain('exchange_feed_frames_dropped_total{reason="slow_consumer"} 1\n');
  });
});
