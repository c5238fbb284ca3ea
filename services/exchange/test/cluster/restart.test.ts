import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startServiceProcess } from '@platform/testkit/app';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';
import { syncCurrencies } from '../../src/ledger/store.js';
import { clientSignV2, nextNonce } from '../support/signing.js';
import { reference } from '../support/targets.js';
import { fundedTraders, MASTER_KEY, ownerOf, startExchangeCluster, type Trader } from './cluster-support.js';

const serviceDir = fileURLToPath(new URL('../..', import.meta.url));

// A process manager starts a crashed node again at once, with the same NODE_ID: the new process finds
// the markets still leased to its id (the lease outlives the crash) though nothing writes them. It
// must take them back (a new epoch), not renew the old leases with no writer behind them, which
// would leave the markets refusing every order on every node.
const database = useTestDatabase('exchange_cluster_restart');

async function leaseOf(db: Database, market: string): Promise<{ owner: string | null; epoch: number }> {
  const { rows } = await db.query<{ owner: string | null; epoch: string }>(
    'SELECT owner, epoch::text FROM market_leases WHERE market = $1',
    [market],
  );
  return { owner: rows[0]!.owner, epoch: Number(rows[0]!.epoch) };
}

/** The environment of an exchange process on `databaseUrl`, its data under `dataDir`, with `extra` on top. */
function serverEnv(databaseUrl: string, dataDir: string, extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    MASTER_KEY,
    MASTER_KEY_FILE: '',
    DATA_DIR: dataDir,
    SEED_DEMO: 'false',
    ALLOW_SANDBOX_SECRETS: 'true',
    PORT: '0',
    METRICS_PORT: 'off',
    ...extra,
  };
}

/**
 * Starts an exchange process that should refuse to start: its exit code and everything it printed.
 * One still running after 60 s is killed (code null), so the test fails instead of hanging.
 */
async function refusedStart(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: serviceDir, env });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  try {
    const [code] = (await once(child, 'exit')) as [number | null];
    return { code, output };
  } finally {
    clearTimeout(timer);
  }
}

describe('a cluster node killed and started again within its lease', () => {
  let db: Database;
  let trader: Trader;
  let cluster: Awaited<ReturnType<typeof startExchangeCluster>>;

  beforeAll(async () => {
    db = await openStorage({ kind: 'postgres', url: database.url, poolSize: 2 });
    await syncCurrencies(db, reference);
    trader = (await fundedTraders(db, 1))[0]!;
    // A lease far longer than a restart: the new process surely meets the old one's leases live.
    cluster = await startExchangeCluster(1, database.url, { CLUSTER_LEASE_MS: '120000' });
  }, 240_000);
  afterAll(async () => {
    await cluster?.close();
    await db?.close();
  }, 60_000);

  /** Sends one buy order until it is accepted (503 while the market has no writer) or `boundMs` passes. */
  async function placeUntilAccepted(boundMs: number): Promise<number[]> {
    const statuses: number[] = [];
    const end = performance.now() + boundMs;
    while (performance.now() < end) {
      const params = {
        market: 'btcuah',
        side: 'buy',
        volume: '0.01',
        price: '1000000',
        access_key: trader.apiKey,
        tonce: nextNonce(),
      };
      const response = await fetch(`${cluster.nodes[0]!.url}/api/v2/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          ...params,
          signature: clientSignV2(trader.secret, 'POST', '/api/v2/orders', params),
        }),
      });
      await response.arrayBuffer();
      statuses.push(response.status);
      if (response.status === 201) break;
      await sleep(250);
    }
    return statuses;
  }

  it('takes its markets back at once under a new epoch', async () => {
    expect(await placeUntilAccepted(30_000)).toContain(201);
    const before = await leaseOf(db, 'btcuah');
    expect(before.owner).toBe('node-1');
    const node = cluster.nodes[0]!;
    node.signal('SIGKILL');
    await node.stop();
    await node.start();
    const statuses = await placeUntilAccepted(20_000);
    expect(statuses.at(-1), `statuses after the restart: ${statuses.join(' ')}`).toBe(201);
    expect(statuses.filter((s) => s !== 201 && s !== 503)).toEqual([]);
    const after = await leaseOf(db, 'btcuah');
    expect(after.owner).toBe('node-1');
    expect(after.epoch).toBeGreaterThan(before.epoch);
    expect(await ownerOf(db, 'btcuah')).toBe('node-1');
  }, 120_000);

  it('a second process given the NODE_ID of the running node refuses to start, and the node keeps its markets', async () => {
    const { epoch } = await leaseOf(db, 'btcuah');
    const { code, output } = await refusedStart(
      serverEnv(database.url, path.join(cluster.cwd, 'twin'), {
        NODE_ID: 'node-1',
        NODE_URL: 'http://127.0.0.1:1',
        CLUSTER_LEASE_MS: '120000',
        CLUSTER_TICK_MS: '250',
      }),
    );
    expect(code, output).toBe(1);
    expect(output).toContain('invalid setting NODE_ID: "node-1" is the id of another node running now');
    expect(await leaseOf(db, 'btcuah')).toEqual({ owner: 'node-1', epoch });
    expect((await placeUntilAccepted(20_000)).at(-1)).toBe(201);
  }, 120_000);

  it('a process without NODE_ID refuses to start beside the running node, and starts once it left', async () => {
    const env = serverEnv(database.url, path.join(cluster.cwd, 'single'), { NODE_ID: '', NODE_URL: '' });
    const { code, output } = await refusedStart(env);
    expect(code, output).toBe(1);
    expect(output).toContain('invalid setting NODE_ID');
    expect(output).toContain('node-1');
    // A graceful stop leaves the cluster: the same start then serves.
    await cluster.nodes[0]!.stop();
    const started = await startServiceProcess({
      name: 'single',
      entry: path.join(serviceDir, 'src/server.ts'),
      cwd: cluster.cwd,
      env: { ...env, PORT: undefined },
      port: 0,
      healthPath: '/health',
      timeoutMs: 120_000,
    });
    try {
      expect((await fetch(`${started.url}/health`)).status).toBe(200);
    } finally {
      await started.stop();
    }
  }, 240_000);
});
