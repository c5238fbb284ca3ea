import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { until as untilWithin } from '@platform/testkit/wait';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';
import { CLOSE } from '../../src/feed/errors.js';
import { syncCurrencies } from '../../src/ledger/store.js';
import { FeedClient } from '../feed/ws-client.js';
import { clientSignV3, nextNonce } from '../support/signing.js';
import { reference } from '../support/targets.js';
import {
  fundedTraders,
  MASTER_KEY,
  ownerOf,
  placeLimit,
  startExchangeCluster,
  type Trader,
} from './cluster-support.js';

// A node that follows a market asks its owner to log each batch's feed (066_feed_wanted.sql) for ten
// leases at a time. Stopped (SIGSTOP) past that, it lets the wish run out and the owner logs commands
// only; woken, it meets those batches without their trades, orders and balances. Its feed must not
// carry on as if nothing happened: the trades and private connections are closed with 4009 (to
// resubscribe), and its market statistics read the trades again, so its ticker is the owner's.
const database = useTestDatabase('exchange_cluster_feed_stall');
const MARKET = 'btcuah';
const serviceDir = path.join(import.meta.dirname, '../..');

interface Status {
  nodes: { node: string; alive: boolean; owns: string[]; lag: Record<string, number> }[];
  markets: { market: string; owner: string | null; epoch: number; seq: number; feedWantedForMs: number }[];
}

/** `cluster status` of the operator tool, as a real process (as `npm run admin` runs it). */
async function clusterStatus(): Promise<Status> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', path.join(serviceDir, 'src/cli.ts'), 'cluster', 'status'],
    {
      cwd: serviceDir,
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        MASTER_KEY,
        MASTER_KEY_FILE: '',
        ALLOW_SANDBOX_SECRETS: 'true',
        LOG_LEVEL: 'warn',
      },
      timeout: 60_000,
    },
  );
  return JSON.parse(stdout) as Status;
}

describe('exchange cluster: a follower stalled past its wish for the feed', () => {
  let db: Database;
  let traders: Trader[];
  let cluster: Awaited<ReturnType<typeof startExchangeCluster>>;

  beforeAll(async () => {
    db = await openStorage({ kind: 'postgres', url: database.url, poolSize: 2 });
    await syncCurrencies(db, reference);
    traders = await fundedTraders(db, 2);
    // A short lease, so the wish (ten leases) runs out within seconds.
    cluster = await startExchangeCluster(2, database.url, {
      CLUSTER_LEASE_MS: '1000',
      CLUSTER_TICK_MS: '100',
    });
  }, 240_000);
  afterAll(async () => {
    for (const node of cluster?.nodes ?? []) node.signal('SIGCONT');
    await cluster?.close();
    await db?.close();
  }, 60_000);

  async function order(url: string, trader: Trader, side: 'buy' | 'sell'): Promise<void> {
    const placed = await placeLimit(url, trader, MARKET, side);
    expect(placed.status, placed.body).toBe(201);
  }
  async function cross(url: string, pairs: number): Promise<void> {
    for (let i = 0; i < pairs; i += 1) {
      await order(url, traders[1]!, 'sell');
      await order(url, traders[0]!, 'buy');
    }
  }
  const ticker = async (url: string) =>
    (await (await fetch(`${url}/v3/tickers?symbols=${MARKET}`)).json()) as unknown;

  /** Polls as the test always did: every 100 ms, for up to 30 s. */
  const until = <T>(what: string, probe: () => Promise<T | undefined>) =>
    untilWithin(what, probe, 30_000, 100);

  it('closes its trades and private connections with 4009 and reads the trades again', async () => {
    const ownerId = await until('an owner of the market', () => ownerOf(db, MARKET));
    await db.query('UPDATE market_leases SET pinned_to = $2 WHERE market = $1', [MARKET, ownerId]);
    const owner = cluster.nodes.find((n) => n.id === ownerId)!;
    const follower = cluster.nodes.find((n) => n.id !== ownerId)!;
    await cross(owner.url, 2);

    // A client on the follower, following trades and its orders.
    const client = await FeedClient.open(`${follower.url.replace('http', 'ws')}/v3/ws`);
    const nonce = nextNonce();
    const auth = await client.request({
      op: 'auth',
      id: 1,
      key: traders[0]!.apiKey,
      nonce,
      signature: clientSignV3(traders[0]!.secret, '/v3/ws', nonce, '{}'),
    });
    expect(auth.event).toBe('authenticated');
    expect((await client.request({ op: 'subscribe', id: 2, channel: 'trades', market: MARKET })).event).toBe(
      'subscribed',
    );
    expect((await client.request({ op: 'subscribe', id: 3, channel: 'orders' })).event).toBe('subscribed');
    await until('the follower to show the trades', async () =>
      JSON.stringify(await ticker(follower.url)) === JSON.stringify(await ticker(owner.url))
        ? true
        : undefined,
    );

    // The operator tool shows both nodes, the owner and epoch of every market, and the follower's
    // wish for the market's feed.
    const status = await clusterStatus();
    expect(status.nodes.map((n) => [n.node, n.alive])).toEqual(
      [...cluster.nodes].map((n) => [n.id, true]).sort(),
    );
    const row = status.markets.find((m) => m.market === MARKET)!;
    expect(row.owner).toBe(ownerId);
    expect(row.epoch).toBeGreaterThan(0);
    expect(row.seq).toBeGreaterThanOrEqual(4);
    expect(row.feedWantedForMs).toBeGreaterThan(0);
    // No market owned twice (one may be between owners: the nodes even out their shares).
    const owned = status.nodes.flatMap((n) => n.owns);
    expect(new Set(owned).size).toBe(owned.length);
    expect(status.nodes.find((n) => n.node === ownerId)!.owns).toContain(MARKET);
    const markets = status.markets.map((m) => m.market).sort();
    for (const node of status.nodes) expect(Object.keys(node.lag).sort()).toEqual(markets);

    // The nodes share one DATA_DIR (as the README's three nodes in one folder do): on PostgreSQL no
    // node writes the embedded database's operator file there (two nodes raced on it: EEXIST).
    expect(existsSync(path.join(cluster.cwd, 'data', 'operator.json'))).toBe(false);

    follower.signal('SIGSTOP');
    // Until the follower's wish has run out (the database's clock), then trades on the owner.
    await until('the wish for the feed to run out', async () => {
      const { rows } = await db.query<{ out: boolean }>(
        'SELECT feed_wanted_until < clock_timestamp() AS out FROM market_leases WHERE market = $1',
        [MARKET],
      );
      return rows[0]!.out ? true : undefined;
    });
    const { rows: before } = await db.query<{ seq: string }>(
      'SELECT coalesce(max(seq), 0)::text AS seq FROM engine_commands WHERE market = $1',
      [MARKET],
    );
    await cross(owner.url, 3);
    const { rows: unfed } = await db.query<{ n: number; fed: number }>(
      'SELECT count(*)::int AS n, (count(*) FILTER (WHERE feed IS NOT NULL))::int AS fed FROM engine_commands WHERE market = $1 AND seq > $2',
      [MARKET, before[0]!.seq],
    );
    expect(unfed[0]).toEqual({ n: 6, fed: 0 });
    const expected = await ticker(owner.url);

    follower.signal('SIGCONT');
    const closed = await client.whenClosed(30_000);
    expect(closed.code).toBe(CLOSE.feedGap);
    expect(closed.reason).toMatch(new RegExp(`^feed gap: ${MARKET} seq \\d+-\\d+ not logged; resubscribe$`));
    // No trades frame of the batches it could not make was sent before the close.
    const tradeFrames = client.frames.filter(
      (f) => f.event === 'trades' && Number(f.seq) > Number(before[0]!.seq),
    );
    expect(tradeFrames).toEqual([]);
    await until('the follower\u2019s ticker to be the owner\u2019s', async () =>
      JSON.stringify(await ticker(follower.url)) === JSON.stringify(expected) ? true : undefined,
    );
    // Back in the cluster, it asks for the feed again and the owner logs it.
    await until('the follower to want the feed again', async () => {
      const { rows } = await db.query<{ wanted: boolean }>(
        'SELECT feed_wanted_until > clock_timestamp() AS wanted FROM market_leases WHERE market = $1',
        [MARKET],
      );
      return rows[0]!.wanted ? true : undefined;
    });
  }, 180_000);
});
