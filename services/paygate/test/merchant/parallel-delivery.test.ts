import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCatalog } from '../support/catalog.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { postInvoice } from '../support/invoice-form.js';
import { usePostgresTarget } from '../support/targets.js';

const target = usePostgresTarget();

/**
 * A receiver that never answers the callbacks of one object: the gateway must go on delivering the
 * others meanwhile (before, a pass waited for its slowest callback, so one hanging receiver held up
 * every merchant and object for CALLBACK_TIMEOUT_MS per pass).
 */
describe('callbacks run in parallel across objects', () => {
  let gateway: RunningGateway;
  let hangId = '';
  const hanging: ServerResponse[] = [];
  const delivered: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string };
      if (body.id === hangId) {
        hanging.push(response);
        return;
      }
      delivered.push(body.id);
      response.writeHead(200).end('{}');
    });
  });

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
    gateway = await startGateway({
      db: target.db(),
      catalog: testCatalog({ callbackUrl: url }),
      workerIntervalMs: 50,
      // far longer than the test waits: the hanging callback stays in flight throughout
      callbackTimeoutMs: 120_000,
    });
  });
  afterAll(async () => {
    for (const response of hanging) response.destroy();
    server.closeAllConnections();
    await gateway?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const newInvoice = async () => {
    const response = await postInvoice(gateway.url, `dep-${randomUUID()}`, '500');
    return ((await response.json()) as { data: { id: string } }).data.id;
  };
  const until = async (check: () => boolean, what: string, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`${what} not reached in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('delivers the callbacks of 20 other objects while one receiver call hangs', async () => {
    hangId = await newInvoice();
    await until(() => hanging.length === 1, 'the hanging callback');
    const others = await Promise.all(Array.from({ length: 20 }, () => newInvoice()));
    await until(() => others.every((id) => delivered.includes(id)), 'the other callbacks');
    expect(hanging).toHaveLength(1);
    expect(delivered).not.toContain(hangId);
  });
});
