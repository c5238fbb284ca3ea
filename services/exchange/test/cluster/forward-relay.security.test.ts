import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { freePort } from '@platform/testkit/ports';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { marketCommand } from '../../src/cluster/operator.js';
import type { Database } from '../../src/db/database.js';
import { openStorage } from '../../src/db/open.js';
import { syncCurrencies } from '../../src/ledger/store.js';
import { reference } from '../support/targets.js';
import { type AnswerRelay, startAnswerRelay } from './answer-relay.js';
import { clusterNodeEnv, fundedTraders, ownerOf, placeLimit, type Trader } from './cluster-support.js';

// Issue 41: on the nodes' network, a relay between two nodes replaced the owner's answer to a
// forwarded order by a refusal (INSUFFICIENT_FUNDS): the client got 400 while the order was live on
// the owner with its funds locked. Answers are signed and bound to their request now: one that
// fails its check is an unknown outcome, 503 with retry-after, and the client looks the order up.
const database = useTestDatabase('exchange_cluster_relay');
const serviceDir = fileURLToPath(new URL('../..', import.meta.url));

describe('a relay between two nodes rewrites the owner’s answers', () => {
  let db: Database;
  let trader: Trader;
  let relay: AnswerRelay;
  let cwd: string;
  const nodes: ServiceProcess[] = [];

  beforeAll(async () => {
    db = await openStorage({ kind: 'postgres', url: database.url, poolSize: 2 });
    await syncCurrencies(db, reference);
    trader = (await fundedTraders(db, 1))[0]!;
    mkdirSync(path.join(serviceDir, '.tmp'), { recursive: true });
    cwd = mkdtempSync(path.join(serviceDir, '.tmp', 'cluster-relay-'));
    // node-2 listens on its own port; the other node reaches it only through the relay, its NODE_URL.
    const listen = await freePort();
    relay = await startAnswerRelay(listen);
    const urls = {
      'node-1': `http://127.0.0.1:${await freePort()}`,
      'node-2': `http://127.0.0.1:${relay.port}`,
    };
    const started = await Promise.all(
      (['node-1', 'node-2'] as const).map((id) =>
        startServiceProcess({
          name: id,
          entry: path.join(serviceDir, 'src/server.ts'),
          cwd,
          port: 0,
          healthPath: '/health',
          timeoutMs: 180_000,
          env: {
            ...clusterNodeEnv(cwd),
            DATABASE_URL: database.url,
            NODE_ID: id,
            NODE_URL: urls[id],
            ...(id === 'node-2' ? { NODE_LISTEN: `127.0.0.1:${listen}` } : {}),
          },
        }),
      ),
    );
    nodes.push(...started);
    await marketCommand(db, 'pin', 'btcuah', 'node-2');
    const deadline = performance.now() + 30_000;
    while ((await ownerOf(db, 'btcuah')) !== 'node-2' && performance.now() < deadline) await sleep(100);
  }, 240_000);

  afterAll(async () => {
    for (const node of nodes) await node.stop();
    await relay?.close();
    await db?.close();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  }, 60_000);

  async function ordersOf(accountId: number) {
    const { rows } = await db.query<{ state: string; locked: string }>(
      `SELECT o.state, (SELECT locked::text FROM balances WHERE account_id = $1 AND currency = 'uah') AS locked
         FROM orders o WHERE o.account_id = $1 ORDER BY o.id`,
      [accountId],
    );
    return rows;
  }

  it('the client gets 503 (outcome unknown), never the forged refusal, and the order is live', async () => {
    expect(await ownerOf(db, 'btcuah')).toBe('node-2');
    // Through the relay, answers passed as they are: node-1 forwards to node-2 and the order is taken.
    relay.forging = false;
    let passed: { status: number; body: string } | undefined;
    for (let attempt = 0; attempt < 100 && passed?.status !== 201; attempt += 1) {
      passed = await placeLimit(nodes[0]!.url, trader, 'btcuah', 'buy');
      if (passed.status !== 201) await sleep(100);
    }
    expect(passed).toMatchObject({ status: 201 });
    const before = await ordersOf(trader.accountId);

    relay.forging = true;
    const response = await placeLimit(nodes[0]!.url, trader, 'btcuah', 'buy');
    expect(relay.rewritten).toBe(1);
    expect(response.status, response.body).toBe(503);
    expect(JSON.parse(response.body)).toMatchObject({ error: { name: 'unavailable' } });
    // The owner took the order: it rests in the book with its funds locked.
    const after = await ordersOf(trader.accountId);
    expect(after).toHaveLength(before.length + 1);
    expect(after.at(-1)!.state).toBe('wait');
    expect(BigInt(after.at(-1)!.locked)).toBeGreaterThan(BigInt(before.at(-1)!.locked));
  }, 60_000);
});
