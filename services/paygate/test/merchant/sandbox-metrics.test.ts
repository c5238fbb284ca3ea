import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/catalog/load.js';
import { bundledDocument, SANDBOX_SECRET } from '../support/catalog.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { postInvoice } from '../support/invoice-form.js';
import { type Receiver, startReceiver } from '../support/receiver.js';
import { usePgliteTarget } from '../support/targets.js';

const target = usePgliteTarget();

/** The metric's value for one merchant and fault (0 when never counted). */
async function faults(registry: Registry, fault: string): Promise<number> {
  const metric = registry.getSingleMetric('paygate_sandbox_callback_faults_total');
  const values = (await metric?.get())?.values ?? [];
  return values.find((v) => v.labels.merchant === 'exchange' && v.labels.fault === fault)?.value ?? 0;
}

describe('paygate_sandbox_callback_faults_total', () => {
  let gateway: RunningGateway;
  let receiver: Receiver;
  const registry = new Registry();
  beforeAll(async () => {
    receiver = await startReceiver(SANDBOX_SECRET);
    // Every callback of the exchange merchant doubled and held back 1-2 ms, none of the other faults.
    const catalog = buildCatalog(
      bundledDocument({ callbackUrl: receiver.url }),
      new Map([['PAYGATE_MERCHANT_CALLBACK_FAULTS_EXCHANGE', 'duplicate=1,delay=1,delay_ms=1-2,seed=5']]),
      '<test>',
    );
    gateway = await startGateway({ db: target.db(), catalog, metrics: registry, startWorker: false });
  });
  afterAll(async () => {
    await gateway?.close();
    await receiver?.close();
  });

  it('counts each fault where the sandbox applies it, by merchant and fault', async () => {
    expect(await faults(registry, 'duplicate')).toBe(0);
    const created: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const response = await postInvoice(gateway.url, `faults-${randomUUID()}`, '500');
      expect(response.status).toBe(201);
      created.push(((await response.json()) as { data: { id: string } }).data.id);
    }
    await gateway.worker.runOnce();
    await gateway.worker.runOnce();
    const arrived = receiver.received.filter((r) => created.includes(String(r.body.id)));
    // Three callbacks, each sent twice: three duplicates and three delays counted, nothing else.
    expect(arrived).toHaveLength(6);
    expect(await faults(registry, 'duplicate')).toBe(3);
    expect(await faults(registry, 'delay')).toBe(3);
    expect(await faults(registry, 'drop')).toBe(0);
    expect(await faults(registry, 'reorder')).toBe(0);
    expect(await registry.metrics()).toMatch(
      /paygate_sandbox_callback_faults_total\{merchant="exchange",fault="duplicate"\} 3/,
    );
  });
});
