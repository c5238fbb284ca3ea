import { setTimeout as sleep } from 'node:timers/promises';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';
import { BookFollower, type BookFrame, L3Follower, type L3Frame } from '../../src/feed/book-follower.js';
import { syncCurrencies } from '../../src/ledger/store.js';
import { OrderSocket } from '../feed/order-socket.js';
import {
  batchFrames,
  lastSeqOf,
  SEQUENCED,
  type Sequenced,
  startOf,
  subscribeSequenced,
} from '../feed/sequenced-channels.js';
import { FeedClient } from '../feed/ws-client.js';
import { reference } from '../support/targets.js';
import { fundedTraders, ownerOf, startExchangeCluster, type Trader } from './cluster-support.js';

// The feed of issue 44 on a three-node cluster (docs/feed.md; README "Running a cluster"): clients
// on every node follow btcuah's book, order-by-order book, trades and their own orders, fills and
// balances while orders come in over the socket to a node that does not write the market (forwarded
// to the owner). Every node sends the same frames, each checksum verifies; then the owner is killed
// (SIGKILL), and a client that was on it resumes on another node from the last numbers it saw: it
// gets exactly the frames it missed, none twice, served from what that node followed of the
// committed log, and its books go on without a snapshot. Candles are the same on every node.
const database = useTestDatabase('exchange_cluster_feed_resume');
const MARKET = 'btcuah';
// btcuah: prices in whole uah, amounts in 10^-6 btc.
const PRECISION = { price: 0, amount: 6 };
type Channel = Sequenced;

/** A client on `url` as `trader`, every channel of MARKET, from the numbers in `resume` if given. */
async function follower(url: string, trader: Trader, resume?: ReadonlyMap<Channel, number>) {
  const client = await FeedClient.open(`${url.replace('http', 'ws')}/v3/ws`);
  await client.authenticate(trader.apiKey, trader.secret);
  return { client, starts: await subscribeSequenced(client, MARKET, resume) };
}

/** Applies the book frames of a client to checksum-checking followers; the outcomes. */
function verify(client: FeedClient, book = new BookFollower(PRECISION), l3 = new L3Follower(PRECISION)) {
  const outcomes: string[] = [];
  for (const frame of client.frames) {
    if (frame.event !== 'snapshot' && frame.event !== 'diff') continue;
    if (frame.channel === 'book') outcomes.push(book.apply(frame as unknown as BookFrame));
    if (frame.channel === 'book_l3') outcomes.push(l3.apply(frame as unknown as L3Frame));
  }
  return { outcomes, book, l3 };
}

describe('exchange cluster: checksummed books, resume on another node after the owner was killed, orders over the socket', () => {
  let db: Database;
  let traders: Trader[];
  let cluster: Awaited<ReturnType<typeof startExchangeCluster>>;
  const clients: FeedClient[] = [];
  const sockets: OrderSocket[] = [];

  beforeAll(async () => {
    db = await openStorage({ kind: 'postgres', url: database.url, poolSize: 2 });
    await syncCurrencies(db, reference);
    traders = await fundedTraders(db, 2);
    cluster = await startExchangeCluster(3, database.url);
  }, 300_000);
  afterAll(async () => {
    for (const client of clients) client.close();
    for (const socket of sockets) socket.close();
    await cluster?.close();
    await db?.close();
  }, 60_000);

  async function logEnd(): Promise<number> {
    const { rows } = await db.query<{ seq: string | null }>(
      'SELECT max(seq)::text AS seq FROM engine_commands WHERE market = $1',
      [MARKET],
    );
    return Number(rows[0]?.seq ?? 0);
  }
  const reached = (client: FeedClient, seq: number) =>
    client.until(
      () => (batchFrames(client, 'book').some((f) => Number(f.seq) >= seq) ? true : undefined),
      30_000,
      `book diff ${seq}`,
    );

  /** Order ids the socket acknowledged, with their account. */
  const acked = new Map<number, number>();
  /** Crossing pairs over the socket on `socket`'s node; an order refused while the market changes hands is sent again. */
  async function cross(pairs: number, maker: OrderSocket, taker: OrderSocket): Promise<void> {
    for (let i = 0; i < pairs; i += 1) {
      for (const [socket, trader, amount] of [
        [maker, traders[1]!, '-0.01'],
        [taker, traders[0]!, '0.006'],
      ] as const) {
        for (let attempt = 0; ; attempt += 1) {
          const answer = await socket.op('order.submit', {
            symbol: MARKET,
            type: 'limit',
            amount,
            price: String(1_500_000 + (i % 3) * 1_000),
          });
          if (answer.result) {
            acked.set((answer.result as number[])[0]!, trader.accountId);
            break;
          }
          // 503 unavailable while nobody writes the market (a takeover): wait and send it again.
          expect(answer.error!.name, JSON.stringify(answer)).toBe('unavailable');
          expect(attempt).toBeLessThan(200);
          await sleep(100);
        }
      }
    }
  }

  it('every node sends the same verified frames; the client of the killed owner resumes on another node with exactly what it missed', async () => {
    let owner: string | undefined;
    for (let i = 0; i < 200 && !owner; i += 1) {
      owner = await ownerOf(db, MARKET);
      if (!owner) await sleep(50);
    }
    const ownerNode = cluster.nodes.find((n) => n.id === owner)!;
    const others = cluster.nodes.filter((n) => n.id !== owner);
    const [entry, steadyNode] = others as [(typeof others)[number], (typeof others)[number]];
    // Subscribers on every node; orders over the socket to a node that forwards them to the owner.
    const onOwner = await follower(ownerNode.url, traders[0]!);
    const onEntry = await follower(entry.url, traders[0]!);
    const onSteady = await follower(steadyNode.url, traders[0]!);
    clients.push(onOwner.client, onEntry.client, onSteady.client);
    const maker = await OrderSocket.open(
      `${entry.url.replace('http', 'ws')}/v3/ws`,
      traders[1]!.apiKey,
      traders[1]!.secret,
    );
    const taker = await OrderSocket.open(
      `${entry.url.replace('http', 'ws')}/v3/ws`,
      traders[0]!.apiKey,
      traders[0]!.secret,
    );
    sockets.push(maker, taker);
    await cross(10, maker, taker);
    let end = await logEnd();
    for (const { client } of [onOwner, onEntry, onSteady]) await reached(client, end);
    const from = Math.max(
      ...[onOwner, onEntry, onSteady].flatMap(({ starts }) =>
        [...starts.values()].map((answer) => startOf(answer, MARKET)),
      ),
    );
    for (const channel of SEQUENCED) {
      const frames = [onOwner, onEntry, onSteady].map(({ client }) =>
        batchFrames(client, channel).filter((f) => Number(f.seq) > from),
      );
      expect(frames[0]!.length, channel).toBeGreaterThan(0);
      expect(frames[1], `${channel} on the forwarding node`).toEqual(frames[0]);
      expect(frames[2], `${channel} on the third node`).toEqual(frames[0]);
    }
    for (const { client } of [onOwner, onEntry, onSteady])
      expect(new Set(verify(client).outcomes)).toEqual(new Set(['applied']));

    // The owner dies; its client saw every frame up to `last`. Orders go on through the entry node.
    const last = new Map<Channel, number>(
      SEQUENCED.map((channel) => [
        channel,
        lastSeqOf(onOwner.client, channel, onOwner.starts.get(channel)!, MARKET),
      ]),
    );
    const kept = verify(onOwner.client);
    ownerNode.signal('SIGKILL');
    await onOwner.client.whenClosed(20_000);
    await cross(6, maker, taker);
    end = await logEnd();
    await reached(onSteady.client, end);

    // It resumes on the third node (which followed the market, or writes it now).
    const moved = await follower(steadyNode.url, traders[0]!, last);
    clients.push(moved.client);
    for (const channel of SEQUENCED) {
      expect(moved.starts.get(channel)!.resumed, channel).toBe(true);
      expect(startOf(moved.starts.get(channel)!, MARKET), channel).toBe(last.get(channel));
    }
    await cross(3, maker, taker);
    end = await logEnd();
    await reached(moved.client, end);
    await reached(onSteady.client, end);
    for (const channel of SEQUENCED) {
      const expected = batchFrames(onSteady.client, channel).filter(
        (f) => Number(f.seq) > last.get(channel)!,
      );
      expect(expected.length, `${channel} after the kill`).toBeGreaterThan(0);
      expect(batchFrames(moved.client, channel), channel).toEqual(expected);
    }
    // Its books, kept from the dead node's frames, take the resumed frames without a snapshot.
    expect(moved.client.frames.some((f) => f.event === 'snapshot')).toBe(false);
    const resumedOutcomes = verify(moved.client, kept.book, kept.l3).outcomes;
    expect(new Set(resumedOutcomes)).toEqual(new Set(['applied']));
    const rest = await fetch(`${steadyNode.url}/v3/book/${MARKET}`);
    expect(kept.book.restBook()).toEqual(await rest.json());
    expect(kept.book.checksum()).toBe(Number(rest.headers.get('x-book-checksum')));

    // Every order the socket acknowledged is stored once, for its account.
    const { rows } = await db.query<{ id: string; account_id: number }>(
      'SELECT id::text, account_id FROM orders WHERE id = ANY($1::bigint[])',
      [[...acked.keys()]],
    );
    expect(new Map(rows.map((r) => [Number(r.id), r.account_id]))).toEqual(acked);
    // Candles: the same on both live nodes.
    const candles = await Promise.all(
      [entry, steadyNode].map(async (node) =>
        (await fetch(`${node.url}/v3/candles/${MARKET}?resolution=1m`)).json(),
      ),
    );
    expect((candles[0] as unknown[]).length).toBeGreaterThan(0);
    expect(candles[1]).toEqual(candles[0]);
  }, 240_000);
});
