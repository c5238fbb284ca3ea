import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type ServiceCluster, startServiceCluster } from '@platform/testkit/cluster';
import { issueApiKey } from '../../src/apikeys/store.js';
import { parseMasterKey } from '../../src/config.js';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import type { Database } from '../../src/db/database.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { credit, newAccount } from '../support/accounts.js';
import { clientSignV2, nextNonce } from '../support/signing.js';

export const MASTER_KEY = 'cd'.repeat(32);
const serviceDir = fileURLToPath(new URL('../..', import.meta.url));

export interface Trader {
  readonly accountId: number;
  readonly apiKey: string;
  readonly secret: string;
}

const FUNDS = { btc: 10n ** 12n, eth: 10n ** 14n, uah: 10n ** 16n };

/** A signed v2 limit order of 0.01 base at 1,500,000 sent to `url`: its status and body. */
export async function placeLimit(
  url: string,
  trader: Trader,
  market: string,
  side: 'buy' | 'sell',
): Promise<{ status: number; body: string }> {
  const params = {
    market,
    side,
    volume: '0.01',
    price: '1500000',
    access_key: trader.apiKey,
    tonce: nextNonce(),
  };
  const response = await fetch(`${url}/api/v2/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      ...params,
      signature: clientSignV2(trader.secret, 'POST', '/api/v2/orders', params),
    }),
  });
  return { status: response.status, body: await response.text() };
}

/** Accounts funded in btc, eth and uah with a trading key sealed with MASTER_KEY. */
export async function fundedTraders(db: Database, count: number): Promise<Trader[]> {
  const box = createSecretBox(parseMasterKey(MASTER_KEY, 'MASTER_KEY'));
  const traders: Trader[] = [];
  for (let i = 0; i < count; i += 1) {
    const account = await newAccount(db);
    for (const [currency, amount] of Object.entries(FUNDS)) await credit(db, account.id, currency, amount);
    const { key, secret } = await issueApiKey(db, box, account.id, ['read', 'trade']);
    traders.push({ accountId: account.id, apiKey: key.publicKey, secret });
  }
  return traders;
}

/**
 * The lease length the test clusters run with: 5000 ms, longer than the 3000 ms default, so that a
 * node starved by a loaded 2-core machine renews in time; CLUSTER_TEST_LEASE_MS=3000 runs them at the
 * default.
 */
export const TEST_LEASE_MS = Number(process.env.CLUSTER_TEST_LEASE_MS ?? 5_000);

/** The settings of every test node (besides DATABASE_URL, NODE_ID, NODE_URL, PORT), its data under `cwd`. */
export function clusterNodeEnv(cwd: string): NodeJS.ProcessEnv {
  return {
    MASTER_KEY,
    MASTER_KEY_FILE: '',
    DATA_DIR: path.join(cwd, 'data'),
    SEED_DEMO: 'false',
    // The gateway's documented sandbox secret, refused with DATABASE_URL unless forced (issue 28).
    ALLOW_SANDBOX_SECRETS: 'true',
    LOG_LEVEL: 'warn',
    RATE_LIMITS_ENABLED: 'false',
    CLUSTER_LEASE_MS: String(TEST_LEASE_MS),
    CLUSTER_TICK_MS: '250',
    CLUSTER_HANDOVER_WAIT_MS: '5000',
    DATABASE_POOL_SIZE: '4',
    LOG_FORMAT: 'json',
  };
}

/** A cluster of exchange processes on `databaseUrl` with the tests' lease (TEST_LEASE_MS); `env` adds or overrides settings. */
export async function startExchangeCluster(
  size: number,
  databaseUrl: string,
  env: NodeJS.ProcessEnv = {},
): Promise<ServiceCluster & { cwd: string }> {
  mkdirSync(path.join(serviceDir, '.tmp'), { recursive: true });
  const cwd = mkdtempSync(path.join(serviceDir, '.tmp', 'cluster-'));
  const cluster = await startServiceCluster({
    size,
    entry: path.join(serviceDir, 'src/server.ts'),
    cwd,
    databaseUrl,
    env: { ...clusterNodeEnv(cwd), ...env },
    // CLUSTER_TEST_LOG_DIR=<folder>: every node's output is kept there (node-1.log, ...).
    ...(process.env.CLUSTER_TEST_LOG_DIR
      ? {
          onOutput: (node: string, text: string) =>
            appendFileSync(path.join(process.env.CLUSTER_TEST_LOG_DIR!, `${node}.log`), text),
        }
      : {}),
  });
  return {
    ...cluster,
    cwd,
    async close() {
      await cluster.close();
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}

/** Deterministic pseudo-random numbers in [0, 1) from a seed. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

/** What the load saw: acknowledged orders and every answer's status. */
export interface LoadRecord {
  readonly acked: Map<number, number>;
  readonly statuses: Map<number, number>;
  /** Answers that were neither 201 nor a 503 with retry-after. */
  readonly bad: string[];
  /** Per acknowledged order: its market, the node it was sent to, when it was sent and when its answer arrived (performance.now()). */
  readonly ackTimes: { market: string; node: string; sentAt: number; at: number }[];
  /** Every order sent: its market, node and time, and once answered (any status) when and how. */
  readonly sent: { market: string; node: string; sentAt: number; at?: number; status?: number }[];
}

export function newRecord(): LoadRecord {
  return { acked: new Map(), statuses: new Map(), bad: [], ackTimes: [], sent: [] };
}

/**
 * Crossing load: each trader sends v2 limit orders one after the other (nonces increase) to a
 * random running node, buying and selling around one price, until `stop()`. Nodes named in
 * `avoid` (read before each order) get no new order: a paused node, which clients (a load balancer's
 * health check) have stopped sending to, as they stop sending to a killed one. `abandon(node)`
 * gives up the requests waiting at a node (what a killed node's reset does by itself; a paused
 * node's clients would otherwise wait out their 15 s timeout and send nothing meanwhile); it
 * returns how many there were.
 */
export function crossingLoad(
  cluster: ServiceCluster,
  traders: readonly Trader[],
  markets: readonly string[],
  random: () => number,
  record: LoadRecord,
  avoid: ReadonlySet<string> = new Set(),
): { stop: () => Promise<void>; abandon: (node: string) => number } {
  let stopped = false;
  const waiting = new Map<string, Set<AbortController>>();
  const run = async (trader: Trader) => {
    while (!stopped) {
      const running = cluster.nodes.filter((node) => node.process?.isRunning() && !avoid.has(node.id));
      const node = running[Math.floor(random() * running.length)];
      if (!node) {
        await sleep(50);
        continue;
      }
      const market = markets[Math.floor(random() * markets.length)]!;
      const params = {
        market,
        side: random() < 0.5 ? 'buy' : 'sell',
        volume: '0.01',
        price: String(1_500_000 + Math.floor(random() * 7 - 3) * 1_000),
        access_key: trader.apiKey,
        tonce: nextNonce(),
      };
      const body = new URLSearchParams({
        ...params,
        signature: clientSignV2(trader.secret, 'POST', '/api/v2/orders', params),
      });
      let response: Response;
      const sentAt = performance.now();
      const sent: LoadRecord['sent'][number] = { market, node: node.id, sentAt };
      record.sent.push(sent);
      const abandoned = new AbortController();
      const atNode = waiting.get(node.id) ?? new Set();
      waiting.set(node.id, atNode.add(abandoned));
      try {
        response = await fetch(`${node.url}/api/v2/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body,
          signal: AbortSignal.any([AbortSignal.timeout(15_000), abandoned.signal]),
        });
      } catch {
        // A killed or stopped node: this order may or may not be stored (not acknowledged).
        await sleep(20);
        continue;
      } finally {
        atNode.delete(abandoned);
      }
      const text = await response.text().catch(() => '');
      const answered = { market, node: node.id, sentAt, at: performance.now() };
      Object.assign(sent, { at: answered.at, status: response.status });
      record.statuses.set(response.status, (record.statuses.get(response.status) ?? 0) + 1);
      if (response.status === 201) {
        record.acked.set((JSON.parse(text) as { id: number }).id, trader.accountId);
        record.ackTimes.push(answered);
      } else if (response.status === 503 && response.headers.get('retry-after')) {
        await sleep(100);
      } else {
        record.bad.push(`${response.status} ${text}`);
      }
    }
  };
  const all = Promise.all(traders.map(run));
  return {
    async stop() {
      stopped = true;
      await all;
    },
    abandon(node) {
      const given = [...(waiting.get(node) ?? [])];
      for (const controller of given) controller.abort();
      return given.length;
    },
  };
}

/** The node writing `market` now (live lease), if any. */
export async function ownerOf(db: Database, market: string): Promise<string | undefined> {
  const { rows } = await db.query<{ owner: string | null }>(
    `SELECT owner FROM market_leases WHERE market = $1 AND expires_at > clock_timestamp()`,
    [market],
  );
  return rows[0]?.owner ?? undefined;
}

/** Every invariant after a fault; returns the problems found (empty: all hold). */
export async function checkInvariants(
  db: Database,
  cluster: ServiceCluster,
  record: LoadRecord,
  markets: readonly string[],
): Promise<string[]> {
  const problems: string[] = [];
  const ids = [...record.acked.keys()];
  const { rows } = await db.query<{ id: string; account_id: number }>(
    'SELECT id::text, account_id FROM orders WHERE id = ANY($1::bigint[])',
    [ids],
  );
  const stored = new Map(rows.map((row) => [Number(row.id), row.account_id]));
  for (const [id, account] of record.acked) {
    if (stored.get(id) !== account)
      problems.push(`acknowledged order ${id} is not stored for account ${account}`);
  }
  // Each order's fills are exactly its trades: a trade settled twice would show.
  const fills = await db.query<{ id: string }>(
    `SELECT o.id::text FROM orders o
       LEFT JOIN (SELECT order_id, sum(amount) AS amount, count(*) AS n FROM (
                    SELECT buy_order_id AS order_id, amount FROM trades
                    UNION ALL SELECT sell_order_id, amount FROM trades) t GROUP BY order_id) f ON f.order_id = o.id
      WHERE o.executed <> coalesce(f.amount, 0) OR o.trades_count <> coalesce(f.n, 0)`,
  );
  for (const row of fills.rows) problems.push(`order ${row.id}: fills differ from its trades`);
  const negative = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM balances b JOIN accounts a ON a.id = b.account_id
      WHERE a.system_code IS DISTINCT FROM 'external' AND (b.available < 0 OR b.locked < 0)`,
  );
  if (negative.rows[0]!.n > 0) problems.push(`${negative.rows[0]!.n} negative balances`);
  const report = await reconcile(db);
  problems.push(...report.problems.map((p) => `reconcile: ${JSON.stringify(p)}`));
  for (const bad of record.bad) problems.push(`answer ${bad}`);
  // Every running node shows the same book, which is not crossed and holds the waiting orders.
  for (const market of markets) {
    const waiting = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM orders WHERE market = $1 AND state = 'wait'`,
      [market],
    );
    let books: string[] = [];
    let seen: string[] = [];
    for (let attempt = 0; attempt < 60; attempt += 1) {
      books = [];
      seen = [];
      for (const node of cluster.nodes) {
        if (!node.process?.isRunning()) continue;
        const book = (await (await fetch(`${node.url}/v3/book/${market}`)).json()) as number[][];
        const bids = book.filter((level) => level[1]! > 0);
        const asks = book.filter((level) => level[1]! < 0);
        if (bids.length > 0 && asks.length > 0 && bids[0]![0]! >= asks[0]![0]!) {
          problems.push(`${node.id}: book of ${market} is crossed`);
        }
        const count = book.reduce((sum, level) => sum + level[2]!, 0);
        books.push(`${count === waiting.rows[0]!.n}:${JSON.stringify(book)}`);
        seen.push(`${node.id}: ${count} orders in ${book.length} levels`);
      }
      if (new Set(books).size === 1 && books[0]!.startsWith('true')) break;
      await sleep(250);
    }
    if (new Set(books).size !== 1 || !books[0]!.startsWith('true')) {
      const { rows: applied } = await db.query<{ node_id: string; applied: string; seq: string }>(
        `SELECT n.node_id, n.applied->>$1 AS applied, l.seq::text FROM cluster_nodes n, market_leases l WHERE l.market = $1`,
        [market],
      );
      const progress = applied.map((row) => `${row.node_id} applied ${row.applied} of ${row.seq}`).join(', ');
      problems.push(
        `nodes disagree on the book of ${market} or with the ${waiting.rows[0]!.n} stored waiting orders (${seen.join('; ')}; ${progress})`,
      );
    }
  }
  return problems;
}
