import { startTcpFront, type TcpFront } from '@platform/testkit/front';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BookFollower, type BookFrame, L3Follower, type L3Frame } from '../../src/feed/book-follower.js';
import { usePostgresTarget } from '../support/targets.js';
import { OrderSocket } from './order-socket.js';
import {
  batchFrames,
  lastSeqOf,
  SEQUENCED,
  type Sequenced,
  startOf,
  subscribeSequenced,
} from './sequenced-channels.js';
import { type Trader, useFeedApp } from './setup.js';
import { FeedClient, type Frame } from './ws-client.js';

// Resume from a sequence number (docs/feed.md, Resume): a client whose connection is cut (a TCP
// front the test owns, testkit's startTcpFront) subscribes again with the last `seq` it saw and
// receives exactly the frames it missed, none twice, then the live ones: the same frames, field for
// field, as a client that never lost its connection. Older than the journal holds: the usual
// snapshot, saying `resumed: false`.
const target = usePostgresTarget();
const JOURNAL = 40;
const feed = useFeedApp(target, { resumeFrames: JOURNAL, messagesPerSecond: 1_000, messageBurst: 1_000 });
const MARKET = 'btcusdt';
const PUBLIC_AND_PRIVATE = SEQUENCED;
type Channel = Sequenced;

async function subscribeAll(
  client: FeedClient,
  trader: Trader,
  resume?: ReadonlyMap<Channel, number>,
): Promise<Map<Channel, Frame>> {
  await client.authenticate(trader.apiKey, trader.secret);
  return subscribeSequenced(client, MARKET, resume);
}

const lastSeq = (client: FeedClient, channel: Channel, answers: Map<Channel, Frame>) =>
  lastSeqOf(client, channel, answers.get(channel)!, MARKET);

describe('live feed: resume after a cut connection (postgres)', () => {
  let front: TcpFront;
  let maker: Trader;
  let taker: Trader;
  let makerSocket: OrderSocket;
  let takerSocket: OrderSocket;
  const port = () => Number(new URL(feed.url()).port);

  beforeAll(async () => {
    front = await startTcpFront();
    front.target(port());
    maker = await feed.trader();
    taker = await feed.trader();
    makerSocket = await OrderSocket.open(feed.wsUrl(), maker.apiKey, maker.secret);
    takerSocket = await OrderSocket.open(feed.wsUrl(), taker.apiKey, taker.secret);
  });
  afterAll(async () => {
    makerSocket?.close();
    takerSocket?.close();
    await front?.close();
  });

  /** `pairs` crossing pairs (the maker's resting sell taken by the taker's buy) and one resting buy. */
  async function cross(pairs: number): Promise<void> {
    for (let i = 0; i < pairs; i += 1) {
      const price = 37_000 + (i % 5);
      for (const [socket, amount] of [
        [makerSocket, -0.01],
        [takerSocket, 0.006],
      ] as const) {
        const answer = await socket.op('order.submit', { symbol: MARKET, type: 'limit', amount, price });
        expect(answer.error, JSON.stringify(answer)).toBeUndefined();
      }
    }
    const rest = await makerSocket.op('order.submit', {
      symbol: MARKET,
      type: 'limit',
      amount: 0.002,
      price: 36_000,
    });
    expect(rest.error).toBeUndefined();
  }

  const logEnd = async () =>
    Number((await feed.app().inject({ method: 'GET', url: `/v3/book/${MARKET}` })).headers['x-book-seq']);
  const reached = (client: FeedClient, seq: number) =>
    client.until(
      () => (batchFrames(client, 'book').some((f) => Number(f.seq) >= seq) ? true : undefined),
      20_000,
      `book diff ${seq}`,
    );

  it('gets exactly the frames it missed, none twice, then goes on live; its books stay verified', async () => {
    const steady = await feed.connect();
    await subscribeAll(steady, maker);
    const moving = await FeedClient.open(`ws://127.0.0.1:${front.port}/v3/ws`);
    const answers = await subscribeAll(moving, maker);
    const book = new BookFollower({ price: 2, amount: 6 });
    const l3 = new L3Follower({ price: 2, amount: 6 });
    const feedBooks = (client: FeedClient, from: number) => {
      const outcomes: string[] = [];
      for (const frame of client.frames.slice(from)) {
        if (frame.channel === 'book' && (frame.event === 'snapshot' || frame.event === 'diff'))
          outcomes.push(book.apply(frame as unknown as BookFrame));
        if (frame.channel === 'book_l3' && (frame.event === 'snapshot' || frame.event === 'diff'))
          outcomes.push(l3.apply(frame as unknown as L3Frame));
      }
      return outcomes;
    };
    await cross(4);
    await reached(moving, await logEnd());
    expect(new Set(feedBooks(moving, 0))).toEqual(new Set(['applied']));
    const last = new Map(
      PUBLIC_AND_PRIVATE.map((channel) => [channel, lastSeq(moving, channel, answers)] as const),
    );
    expect(last.get('book')).toBe(await logEnd());

    // The connection is cut (the front drops it); orders go on meanwhile.
    front.target(port());
    await moving.whenClosed();
    await cross(5);
    await reached(steady, await logEnd());

    const again = await FeedClient.open(`ws://127.0.0.1:${front.port}/v3/ws`);
    const resumed = await subscribeAll(again, maker, last);
    for (const channel of PUBLIC_AND_PRIVATE) {
      expect(resumed.get(channel)!.resumed, channel).toBe(true);
      const start = resumed.get(channel)!;
      expect(startOf(start, MARKET), channel).toBe(last.get(channel));
    }
    // Each `subscribed` answer came before the first frame it announced.
    for (const channel of PUBLIC_AND_PRIVATE) {
      const answer = again.frames.indexOf(resumed.get(channel)!);
      const first = again.frames.findIndex((f) => f.channel === channel && f.event !== 'subscribed');
      if (first >= 0) expect(first, channel).toBeGreaterThan(answer);
    }
    await cross(3);
    const end = await logEnd();
    await reached(again, end);
    await reached(steady, end);
    for (const channel of PUBLIC_AND_PRIVATE) {
      const expected = batchFrames(steady, channel).filter((f) => Number(f.seq) > last.get(channel)!);
      expect(expected.length, `${channel} frames after the cut`).toBeGreaterThan(0);
      // Exactly what the steady client got after that number: no frame missing, none twice.
      expect(batchFrames(again, channel), channel).toEqual(expected);
    }
    // No snapshot came: the books kept from before the cut go on, every checksum verified.
    expect(again.frames.filter((f) => f.event === 'snapshot')).toEqual([]);
    expect(new Set(feedBooks(again, 0))).toEqual(new Set(['applied']));
    expect(book.restBook()).toEqual(
      (await feed.app().inject({ method: 'GET', url: `/v3/book/${MARKET}` })).json(),
    );
    steady.close();
    again.close();
  }, 60_000);

  it('from a number older than the journal holds: resumed false, and the book channels send the usual snapshot', async () => {
    // More batches than the journal keeps (JOURNAL per market) since seq 0.
    await cross(JOURNAL);
    const client = await feed.connect();
    const answers = await subscribeAll(
      client,
      maker,
      new Map(PUBLIC_AND_PRIVATE.map((channel) => [channel, 0] as const)),
    );
    for (const channel of PUBLIC_AND_PRIVATE) expect(answers.get(channel)!.resumed, channel).toBe(false);
    expect(answers.get('book')!.seq).toBe(await logEnd());
    const snapshot = await client.next((f) => f.channel === 'book' && f.event === 'snapshot');
    expect(snapshot).toMatchObject({ resumed: false, seq: await logEnd() });
    expect(await client.next((f) => f.channel === 'book_l3' && f.event === 'snapshot')).toMatchObject({
      resumed: false,
    });
    client.close();
  }, 60_000);

  it('from a number this node has not reached yet (a client from a node ahead): only the frames after it', async () => {
    const end = await logEnd();
    const ahead = end + 4;
    const client = await feed.connect();
    const answer = await client.request({
      op: 'subscribe',
      id: 1,
      channel: 'book',
      market: MARKET,
      from_seq: ahead,
    });
    expect(answer).toMatchObject({ event: 'subscribed', seq: ahead, resumed: true });
    // One order at a time: batches of one command each, seq end+1, end+2, ...
    for (let i = 0; i < 8; i += 1) {
      await makerSocket.submit({ symbol: MARKET, type: 'limit', amount: 0.001, price: 30_000 + i });
    }
    await reached(client, end + 8);
    const seqs = batchFrames(client, 'book').map((f) => Number(f.seq));
    expect(seqs).toEqual([end + 5, end + 6, end + 7, end + 8]);
    client.close();
  }, 60_000);
});

describe('live feed: a resume larger than the send buffer bound (postgres)', () => {
  // A database of its own: one process writes a database's books.
  const bounded = useFeedApp(usePostgresTarget(), {
    maxBufferedBytes: 16_384,
    resumeFrames: 5_000,
    messagesPerSecond: 1_000,
    messageBurst: 1_000,
  });

  it('is written as the client reads, all of it, not dropped as a slow consumer', async () => {
    const trader = await bounded.trader();
    const socket = await OrderSocket.open(bounded.wsUrl(), trader.apiKey, trader.secret);
    // 300 batches of one order each: far more book and book_l3 frames than 16 KiB.
    for (let i = 0; i < 300; i += 1) {
      await socket.submit({ symbol: MARKET, type: 'limit', amount: 0.001, price: 20_000 + i });
    }
    socket.close();
    const client = await bounded.connect();
    for (const [id, channel] of [
      [1, 'book'],
      [2, 'book_l3'],
    ] as const)
      expect(
        await client.request({ op: 'subscribe', id, channel, market: MARKET, from_seq: 0 }),
      ).toMatchObject({
        resumed: true,
      });
    await client.until(
      () =>
        batchFrames(client, 'book_l3').length >= 300 && batchFrames(client, 'book').length >= 300
          ? true
          : undefined,
      30_000,
      'the whole replay',
    );
    const bytes = client.frames.reduce((sum, f) => sum + JSON.stringify(f).length, 0);
    expect(bytes).toBeGreaterThan(4 * 16_384);
    expect(client.closed).toBeUndefined();
    const l3 = new L3Follower({ price: 2, amount: 6 });
    l3.apply({ event: 'snapshot', seq: 0, bids: [], asks: [] });
    for (const frame of batchFrames(client, 'book_l3'))
      expect(l3.apply(frame as unknown as L3Frame)).toBe('applied');
    expect(l3.orders('bid')).toHaveLength(300);
    client.close();
  }, 60_000);
});
