import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { startTcpFront } from '@platform/testkit/front';
import { servicePid } from '@platform/testkit/process';
import { afterAll, describe, expect, it } from 'vitest';
import { bundledYaml, SANDBOX_SECRET } from '../support/catalog.js';
import { postForm } from '../support/gateway.js';
import { postInvoice } from '../support/invoice-form.js';
import { merchantPost } from '../support/merchant.js';
import { startReceiver } from '../support/receiver.js';

const serviceDir = fileURLToPath(new URL('../..', import.meta.url));
const entry = path.join(serviceDir, 'src/server.ts');
mkdirSync(path.join(serviceDir, '.tmp'), { recursive: true });
const cwd = mkdtempSync(path.join(serviceDir, '.tmp', 'restart-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const database = useTestDatabase('paygate_restart');

describe.each(['pglite', 'postgres'] as const)(
  'callbacks survive a killed gateway (real process, %s)',
  (storage) => {
    it('delivers the callbacks pending at SIGKILL after the gateway starts again', async () => {
      // The merchant's address is a front of this test process: down (connections reset) until the
      // receiver starts behind it, and no other process can take its port meanwhile.
      const merchant = await startTcpFront();
      const config = path.join(cwd, `gateway-${storage}.yaml`);
      writeFileSync(config, bundledYaml({ callbackUrl: `${merchant.url}/callback` }));
      const env = {
        DATABASE_URL: storage === 'postgres' ? database.url : '',
        DATA_DIR: path.join(cwd, `data-${storage}`),
        PAYGATE_CONFIG: config,
        PUBLIC_URL: '',
        LOG_LEVEL: 'warn',
        WORKER_INTERVAL_MS: '50',
        CALLBACK_RETRY_BASE_MS: '100',
        CALLBACK_RETRY_MAX_MS: '500',
        PAYOUT_SETTLE_MS: '100',
      };
      const start = () =>
        startServiceProcess({
          sandboxSecrets: true,
          name: `paygate-${storage}`,
          entry,
          cwd,
          env,
          port: 0,
          healthPath: '/health',
          timeoutMs: 60_000,
        });

      // First life: the merchant's callback URL is down, so every event stays in the outbox.
      let first: ServiceProcess | undefined = await start();
      let invoiceId = '';
      let payoutId = '';
      try {
        const created = await postInvoice(first.url, 'restart-deposit', 500);
        const invoice = (
          (await created.json()) as {
            data: {
              id: string;
              active_payment: { action: string; payload: { name: string; value: string }[] };
            };
          }
        ).data;
        invoiceId = invoice.id;
        // PUBLIC_URL unset and PORT=0: the form posts to the port the system gave, not to `:0`.
        expect(invoice.active_payment.action).toBe(`${first.url}/public-api/payment-invoices/process`);
        const payload = Object.fromEntries(invoice.active_payment.payload.map((p) => [p.name, p.value]));
        const paid = await postForm(`${first.url}/public-api/payment-invoices/pay`, {
          ...payload,
          card_number: '4242424242424242',
          expiry: '12/30',
          cvc: '123',
        });
        expect(paid.status).toBe(303);
        const payout = await merchantPost(
          first.url,
          '/merchant-api/payouts',
          {
            reference_id: 'restart-withdrawal',
            service: 'payment_card_uah',
            currency: 'UAH',
            amount: '100.00',
            fields: { card_number: '4242424242424242' },
          },
          SANDBOX_SECRET,
        );
        expect(payout.status).toBe(201);
        payoutId = (payout.json.data as { id: string }).id;
        // Wait until the processor settled the payout: its success event is in the outbox too.
        let settled = false;
        for (let i = 0; i < 200 && !settled; i++) {
          const status = await merchantPost(
            first.url,
            '/merchant-api/payouts/status',
            { reference_id: 'restart-withdrawal' },
            SANDBOX_SECRET,
          );
          settled = (status.json.data as { status: string }).status === 'success';
          if (!settled) await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(settled).toBe(true);
        process.kill(servicePid(first.pid as number), 'SIGKILL');
      } finally {
        await first.stop();
        first = undefined;
      }

      // The merchant comes back, then the gateway does.
      const receiver = await startReceiver(SANDBOX_SECRET);
      merchant.target(receiver.port);
      const second = await start();
      try {
        await receiver.waitFor((all) => all.filter((r) => r.answered === 200).length >= 4, 20_000);
        const byObject = (id: string) =>
          receiver.received.filter((r) => r.body.id === id).map((r) => r.body.status);
        expect(byObject(invoiceId)).toEqual(['created', 'success']);
        expect(byObject(payoutId)).toEqual(['processing', 'success']);
        expect(receiver.received.every((r) => r.signatureValid)).toBe(true);
      } finally {
        await second.stop();
        await receiver.close();
        await merchant.close();
      }
    }, 90_000); // two process starts (PGlite opens its files in each) on a shared 2-core machine
  },
);
