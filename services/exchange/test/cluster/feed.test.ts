import { setTimeout as sleep } from 'node:timers/promises';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';
import { BookFollower, type BookFrame } from '../../src/feed/book-follower.js';
import { syncCurrencies } from '../../src/ledger/store.js';
import { FeedClient } from '../feed/ws-client.js';
import { clientSignV3, nextNonce } from '../support/signing.js';
import { reference } from '../support/targets.js';
import { fundedTraders, ownerOf, placeLimit, startExchangeCluster, type Trader } from './cluster-support.js';

// The live feed on every node of a cluster (README "Running a cluster", docs/feed.md): two nodes on
// one PostgreSQL, real WebSocket clients on both, orders crossing on the owner of the market. The
// node that only follows the market sends the same public and private frames, under the same
// sequence numbers (the committed log's), as the owner; a client that moves from one node to the
// other goes on where it was, or sees by the numbers that it missed frames.
const database = useTestDatabase('exchange_cluster_feed');
const MARKET = 'btcuah';

/** The frames a client received that the comparison covers: the batches' frames, by channel. */
const batchFrames = (client: FeedClient, channel: string, after: number) =>
  client.frames.filter(
    (f) =>
      f.channel === channel && f.event !== 'subscribed' && f.event !== 'snapshot' && Number(f.seq) > after,
  );

describe('exchange cluster: the live feed on every node', () => {
  let db: Database;
  let traders: Trader[];
  let cluster: Awaited<ReturnType<typeof startExchangeCluster>>;
  let ownerUrl: string;
  let followerUrl: string;
  const clients: FeedClient[] = [];

  beforeAll(async () => {
    db = await openStorage({ kind: 'postgres', url: database.url, poolSize: 2 });
    await syncCurrencies(db, reference);
    traders = await fundedTraders(db, 2);
    cluster = await startExchangeCluster(2, database.url);
    let owner: string | undefined;
    for (let i = 0; i < 200 && !owner; i += 1) {
      owner = await ownerOf(db, MARKET);
      if (!owner) await sleep(50);
    }
    ownerUrl = cluster.nodes.find((n) => n.id === owner)!.url;
    followerUrl = cluster.nodes.find((n) => n.id !== owner)!.url;
  }, 240_000);
  afterAll(async () => {
    for (const client of clients) client.close();
    await cluster?.close();
    await db?.close();
  }, 60_000);

  /** A feed client on `url`, authenticated as `trader`, subscribed to every channel of MARKET but the ticker. */
  async function subscribed(url: string, trader: Trader): Promise<{ client: FeedClient; from: number }> {
    const client = await FeedClient.open(`${url.replace('http', 'ws')}/v3/ws`);
    clients.push(client);
    const nonce = nextNonce();
    const auth = await client.request({
      op: 'auth',
      id: 1,
      key: trader.apiKey,
      nonce,
      signature: clientSignV3(trader.secret, '/v3/ws', nonce, '{}'),
    });
    expect(auth.event).toBe('authenticated');
    let from = 0;
    for (const [id, channel] of [
      [2, 'trades'],
      [3, 'book'],
      [4, 'orders'],
      [5, 'balances'],
    ] as const) {
      const answer = await client.request({ op: 'subscribe', id, channel, market: MARKET });
      expect(answer.event).toBe('subscribed');
      // Where each subscription starts in the log (a market's position for the private ones).
      const position = Number(answer.seq ?? (answer.seqs as Record<string, number>)[MARKET]);
      from = Math.max(from, position);
    }
    return { client, from };
  }

  /** A v2 limit order of 0.01 btc at 1,500,000 uah, sent to `url`. */
  async function order(url: string, trader: Trader, side: 'buy' | 'sell'): Promise<void> {
    const placed = await placeLimit(url, trader, MARKET, side);
    expect(placed.status, placed.body).toBe(201);
  }

  /** Crossing orders on the owner: `pairs` times a resting sell of one trader taken by the other's buy. */
  async function cross(pairs: number): Promise<void> {
    for (let i = 0; i < pairs; i += 1) {
      await order(ownerUrl, traders[1]!, 'sell');
      await order(ownerUrl, traders[0]!, 'buy');
    }
    // One order left resting, so the book is not empty at the end.
    await order(ownerUrl, traders[1]!, 'sell');
  }

  /** Resolves once `client` received the book diff of sequence number `seq`. */
  const reached = (client: FeedClient, seq: number) =>
    client.until(
      () => (client.frames.some((f) => f.event === 'diff' && Number(f.seq) >= seq) ? true : undefined),
      20_000,
      `book diff ${seq}`,
    );
  /** The sequence number of the market's last committed batch. */
  async function logEnd(): Promise<number> {
    const { rows } = await db.query<{ seq: string | null }>(
      'SELECT max(seq)::text AS seq FROM engine_commands WHERE market = $1',
      [MARKET],
    );
    return Number(rows[0]?.seq ?? 0);
  }

  it('a follower sends the owner\u2019s public and private frames with the same sequence numbers', async () => {
    const onOwner = await subscribed(ownerUrl, traders[0]!);
    const onFollower = await subscribed(followerUrl, traders[0]!);
    await cross(4);
    const end = await logEnd();
    await reached(onOwner.client, end);
    await reached(onFollower.client, end);
    const from = Math.max(onOwner.from, onFollower.from);
    for (const channel of ['trades', 'book', 'orders', 'balances']) {
      const owner = batchFrames(onOwner.client, channel, from);
      expect(owner.length, `owner's ${channel} frames`).toBeGreaterThan(0);
      const follower = batchFrames(onFollower.client, channel, from);
      // Every frame, field by field, in the same order (the private ones of this market).
      expect(follower, `${channel} frames`).toEqual(owner);
    }
    // Four trades crossed: the follower shows them, as the owner does.
    const trades = batchFrames(onFollower.client, 'trades', from).flatMap((f) => f.trades as unknown[]);
    expect(trades).toHaveLength(4);
    // The diffs chain without a hole: each starts where the one before ended.
    const diffs = batchFrames(onFollower.client, 'book', from);
    for (let i = 1; i < diffs.length; i += 1) expect(diffs[i]!.prev_seq).toBe(diffs[i - 1]!.seq);
  }, 60_000);

  it('a client that moves to the other node goes on without a gap, or sees the gap by the numbers', async () => {
    const steady = await subscribed(followerUrl, traders[1]!);
    // A client on the owner keeps its book from the frames it got there.
    const first = await subscribed(ownerUrl, traders[0]!);
    await cross(1);
    await reached(first.client, await logEnd());
    const book = new BookFollower();
    for (const frame of first.client.frames)
      if (frame.channel === 'book' && (frame.event === 'snapshot' || frame.event === 'diff'))
        book.apply(frame as unknown as BookFrame);
    const left = book.lastSeq!;
    expect(left).toBe(await logEnd());
    first.client.close();
    await reached(steady.client, left);

    // Nothing committed while it moved: on the follower it starts right where it left, and its diffs
    // go on from the book it kept (no snapshot needed).
    const second = await subscribed(followerUrl, traders[0]!);
    expect(second.from).toBe(left);
    await cross(1);
    await reached(second.client, await logEnd());
    const diffs = (c: FeedClient) => c.frames.filter((f) => f.event === 'diff') as unknown as BookFrame[];
    for (const diff of diffs(second.client)) expect(book.apply(diff)).toBe('applied');
    const rest = (await (await fetch(`${followerUrl}/v3/book/${MARKET}`)).json()) as unknown;
    expect(book.restBook()).toEqual(rest);
    const moved = book.lastSeq!;
    second.client.close();

    // Orders committed while it moved back: the new subscription starts after them, which the
    // client sees by the numbers (its trades position is past where it left), and its kept book
    // refuses the next diff as a gap.
    await cross(1);
    await reached(steady.client, await logEnd());
    const third = await subscribed(ownerUrl, traders[0]!);
    expect(third.from).toBeGreaterThan(moved);
    const missed = batchFrames(steady.client, 'trades', moved).filter((f) => Number(f.seq) <= third.from);
    expect(missed.length, 'the trades committed while it moved').toBeGreaterThan(0);
    await cross(1);
    const end = await logEnd();
    await reached(third.client, end);
    expect(diffs(third.client).map((diff) => book.apply(diff))[0]).toBe('gap');
    // What it then receives is what a client that never moved received.
    await reached(steady.client, end);
    const after = batchFrames(third.client, 'trades', third.from);
    expect(after.length).toBeGreaterThan(0);
    expect(after).toEqual(batchFrames(steady.client, 'trades', third.from));
  }, 60_000);
});
