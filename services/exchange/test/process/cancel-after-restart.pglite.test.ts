import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceProcess } from '@platform/testkit/app';
import { servicePid } from '@platform/testkit/process';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedEnv, startExchangeProcess, useServerFolder } from '../support/server-process.js';
import { httpClient } from '../withdraw-addresses/support.js';

const cwd = useServerFolder('cancel-after-pglite-');
const env = embeddedEnv(cwd);

// The embedded database is the process's own (PGlite), so the test sees it only through HTTP: the
// demo account's key, its active orders and its locked balance.
describe("dead-man's switch across a SIGKILL and a restart (real process, embedded PGlite)", () => {
  let server: ServiceProcess | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  it('a trigger that passed while the server was down fires at the next start', async () => {
    server = await startExchangeProcess(cwd, env, { timeoutMs: 180_000 });
    const demo = JSON.parse(readFileSync(path.join(cwd, 'data/exchange/demo-api-key.json'), 'utf8'));
    const call = httpClient(() => server!.url, demo.apiKey, demo.apiSecret);
    const active = async () => ((await call('/v3/auth/r/orders', {})).body as unknown[][]).map((o) => o[0]);
    expect(await active()).toEqual([]);
    const ids: unknown[] = [];
    for (const price of ['100', '101']) {
      const placed = await call('/v3/auth/w/order/submit', {
        symbol: 'btcuah',
        type: 'limit',
        amount: '0.001',
        price,
      });
      expect(placed.status).toBe(200);
      ids.push(placed.body[0]);
    }
    expect((await active()).sort()).toEqual(ids.sort());
    expect((await call('/v3/order/cancel-all-after', { timeout: 1 })).status).toBe(200);
    process.kill(servicePid(server.pid!), 'SIGKILL');
    await server.stop();
    server = undefined;
    await sleep(1_200);

    server = await startExchangeProcess(cwd, env, { timeoutMs: 180_000 });
    const startedAt = Date.now();
    while ((await active()).length > 0) {
      expect(Date.now() - startedAt, 'not fired within 2 s of the start').toBeLessThan(2_000);
      await sleep(20);
    }
    // The locks are released: total and available agree again.
    const wallets = (await call('/v3/auth/r/wallets', {})).body as unknown[][];
    const uah = wallets.find((wallet) => wallet[1] === 'UAH');
    expect(uah, JSON.stringify(wallets)).toBeDefined();
    expect(uah![2]).toBe(uah![4]);
  }, 300_000);
});
