import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTcpFront } from '@platform/testkit/front';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPaygateConfig } from '../../src/config.js';
import { PaygateClient } from '../../src/fiat/client.js';

/**
 * Network failures the real gateway cannot be made to produce on demand: a port nobody listens on,
 * a server that never answers, one that answers garbage. Each comes back as a value, never a throw.
 */
describe('gateway client failures are values', () => {
  let server: Server;
  let url = '';
  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === '/public-api/payment-prerequest') return; // never answers
      if (request.url === '/public-api/payout-prerequest') {
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"data": {"currency": 1}}');
        return;
      }
      if (request.url === '/merchant-api/payouts') {
        response
          .writeHead(422, { 'content-type': 'application/json' })
          .end('{"error": {"code": "invalid_field", "message": "bad card", "field": "card_number"}}');
        return;
      }
      response.writeHead(502).end('<html>proxy error</html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const client = (base: string) =>
    new PaygateClient({ ...defaultPaygateConfig(), url: base, timeoutMs: 300 });

  it('reports an unreachable gateway, a timeout, a wrong shape, a refusal and a non-JSON error page', async () => {
    // A gateway that is down: a front with no server behind it resets every connection, and no other
    // process can answer at its port (unlike one released by freePort()).
    const nobody = await startTcpFront();
    try {
      expect(await client(nobody.url).paymentPrerequest('uah')).toMatchObject({
        ok: false,
        failure: { kind: 'unreachable' },
      });
    } finally {
      await nobody.close();
    }
    expect(await client(url).paymentPrerequest('uah')).toMatchObject({
      ok: false,
      failure: { kind: 'timeout' },
    });
    expect(await client(url).payoutPrerequest('uah', '100.00')).toMatchObject({
      ok: false,
      failure: { kind: 'bad_response', status: 200 },
    });
    expect(
      await client(url).createPayout({
        reference_id: '1',
        service: 'payment_card_uah',
        currency: 'UAH',
        amount: '100.00',
        fields: { card_number: '1' },
      }),
    ).toEqual({
      ok: false,
      failure: {
        kind: 'refused',
        status: 422,
        code: 'invalid_field',
        message: 'bad card',
        field: 'card_number',
      },
    });
    expect(await client(url).invoiceStatus('1')).toMatchObject({
      ok: false,
      failure: { kind: 'bad_response', status: 502 },
    });
    expect(await client(url).paymentPrerequest('btc')).toMatchObject({
      ok: false,
      failure: { kind: 'no_public_key' },
    });
  });
});
