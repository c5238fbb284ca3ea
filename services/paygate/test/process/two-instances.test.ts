import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { servicePid } from '@platform/testkit/process';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { bundledYaml, SANDBOX_SECRET } from '../support/catalog.js';
import { postForm } from '../support/gateway.js';
import { postInvoice } from '../support/invoice-form.js';
import { merchantPost } from '../support/merchant.js';

const serviceDir = fileURLToPath(new URL('../..', import.meta.url));
const entry = path.join(serviceDir, 'src/server.ts');
mkdirSync(path.join(serviceDir, '.tmp'), { recursive: true });
const cwd = mkdtempSync(path.join(serviceDir, '.tmp', 'two-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const database = useTestDatabase('paygate_two');

/**
 * A merchant receiver that holds every answer until the test opens its gate, and counts, per event,
 * the answers that reached a live connection (the acknowledgements a gateway saw).
 */
async function gatedReceiver() {
  let open = false;
  const held: { response: ServerResponse; eventId: string }[] = [];
  const live = new Map<string, number>();
  const acknowledged = new Map<string, number>();
  let overlapping = 0;
  let closedWhileHeld = 0;
  const answer = (response: ServerResponse, eventId: string) => {
    if (response.destroyed || response.socket?.destroyed) return;
    response.writeHead(200).end('{}', () => acknowledged.set(eventId, (acknowledged.get(eventId) ?? 0) + 1));
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const eventId = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event_id: string }).event_id;
      const now = (live.get(eventId) ?? 0) + 1;
      if (now > 1) overlapping += 1;
      live.set(eventId, now);
      const done = () => live.set(eventId, (live.get(eventId) ?? 1) - 1);
      response.on('close', done);
      if (open) return answer(response, eventId);
      held.push({ response, eventId });
      response.on('close', () => {
        if (!open) closedWhileHeld += 1;
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    held,
    acknowledged,
    get overlapping() {
      return overlapping;
    },
    get closedWhileHeld() {
      return closedWhileHeld;
    },
    release() {
      open = true;
      for (const { response, eventId } of held.splice(0)) answer(response, eventId);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const until = async (check: () => boolean | Promise<boolean>, what: string, timeoutMs = 40_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not reached in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

describe('two gateway processes on one PostgreSQL', () => {
  it('sends each payout once, charges concurrent page submissions once, and acknowledges each callback once across a SIGKILL mid-delivery', async () => {
    const receiver = await gatedReceiver();
    const config = path.join(cwd, 'gateway.yaml');
    writeFileSync(config, bundledYaml({ callbackUrl: receiver.url }));
    const env = {
      DATABASE_URL: database.url,
      PAYGATE_CONFIG: config,
      PUBLIC_URL: '',
      LOG_LEVEL: 'warn',
      // The test signs with the catalog's sandbox secret; a gateway with DATABASE_URL set refuses it
      // unless told (README "Settings"), as restart.test.ts does.
      WORKER_INTERVAL_MS: '50',
      CALLBACK_RETRY_BASE_MS: '100',
      CALLBACK_RETRY_MAX_MS: '500',
      CALLBACK_TIMEOUT_MS: '5000',
      PAYOUT_SETTLE_MS: '100',
    };
    const start = (name: string) =>
      startServiceProcess({
        sandboxSecrets: true,
        name,
        entry,
        cwd,
        env,
        port: 0,
        healthPath: '/health',
        timeoutMs: 60_000,
      });
    const a: ServiceProcess = await start('paygate-a');
    const b: ServiceProcess = await start('paygate-b');
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      const both = [a.url, b.url];
      const createInvoice = async (base: string, reference: string) => {
        const response = await postInvoice(base, reference, 500);
        return (
          (await response.json()) as {
            data: { id: string; active_payment: { payload: { name: string; value: string }[] } };
          }
        ).data;
      };

      // One payout reference sent 8 times at once, half to each process: one payout.
      const payouts = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          merchantPost(
            both[i % 2] ?? '',
            '/merchant-api/payouts',
            {
              reference_id: 'two-instances-payout',
              service: 'payment_card_uah',
              currency: 'UAH',
              amount: '100.00',
              fields: { card_number: '4242424242424242' },
            },
            SANDBOX_SECRET,
          ),
        ),
      );
      expect(payouts.filter((p) => p.status === 201)).toHaveLength(1);
      expect(payouts.every((p) => p.status === 201 || p.status === 200)).toBe(true);
      expect(new Set(payouts.map((p) => (p.json.data as { id: string }).id)).size).toBe(1);
      const { rows: payoutRows } = await db.query('SELECT id FROM payouts');
      expect(payoutRows).toHaveLength(1);

      // One invoice's page submitted 8 times at once, half to each process: charged once.
      const invoice = await createInvoice(a.url, 'two-instances-page');
      const payload = Object.fromEntries(invoice.active_payment.payload.map((p) => [p.name, p.value]));
      const submissions = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          postForm(`${both[i % 2]}/public-api/payment-invoices/pay`, {
            ...payload,
            card_number: '4242424242424242',
            expiry: '12/30',
            cvc: '123',
          }),
        ),
      );
      expect(submissions.every((s) => s.status === 303)).toBe(true);
      const { rows: pageEvents } = await db.query<{ event_id: string }>(
        'SELECT event_id FROM callback_outbox WHERE object_id = $1 ORDER BY id',
        [invoice.id],
      );
      expect(pageEvents.map((r) => r.event_id)).toEqual([`${invoice.id}:created`, `${invoice.id}:success`]);

      // 40 more invoices, created through both; the receiver holds every answer.
      await Promise.all(Array.from({ length: 40 }, (_, i) => createInvoice(both[i % 2] ?? '', `two-${i}`)));
      await until(() => receiver.held.length >= 20, 'callbacks in flight');
      process.kill(servicePid(a.pid as number), 'SIGKILL');
      // Process A's connections close: its callbacks in flight were never acknowledged.
      await until(() => receiver.closedWhileHeld >= 1, 'the killed process to drop its callbacks');
      // Every connection of the dead process closed (the count stops growing) before any answer goes
      // out: an answer written to a socket whose peer is gone would count as an acknowledgement.
      let seen = -1;
      await until(async () => {
        const now = receiver.closedWhileHeld;
        const stable = now === seen;
        seen = now;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        return stable;
      }, 'the dead connections to close');
      receiver.release();

      await until(async () => {
        const { rows } = await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM callback_outbox WHERE delivered_at IS NULL',
        );
        return rows[0]?.n === 0;
      }, 'every callback delivered');
      const { rows: all } = await db.query<{ event_id: string }>('SELECT event_id FROM callback_outbox');
      expect(all.length).toBeGreaterThanOrEqual(44);
      for (const { event_id } of all)
        expect([event_id, receiver.acknowledged.get(event_id)]).toEqual([event_id, 1]);
      // Never the same event in flight from both processes at once.
      expect(receiver.overlapping).toBe(0);
    } finally {
      await db.end();
      await a.stop();
      await b.stop();
      await receiver.close();
    }
  }, 180_000);
});
