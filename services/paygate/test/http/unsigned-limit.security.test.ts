import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCatalog } from '../support/catalog.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { exchangeInvoice } from '../support/invoice-form.js';
import { usePostgresTarget } from '../support/targets.js';

/**
 * Issue 41: invoices created without the merchant's signature (the spec's body) are limited per
 * client address (README "Unsigned invoices", `UNSIGNED_INVOICES_PER_ADDRESS` per
 * `UNSIGNED_INVOICES_WINDOW_SECONDS`), across every gateway instance on the database, so nobody can
 * sweep the reference space for taken references or fill it with invoices.
 */
describe('the per-address limit on unsigned invoice creates', () => {
  const target = usePostgresTarget();
  let direct: RunningGateway;
  let proxiedA: RunningGateway;
  let proxiedB: RunningGateway;
  let off: RunningGateway;
  // The gateways' clock starts 1 s into a window, so no test straddles two windows by chance.
  const base = 60_000 - (Date.now() % 60_000) + 1_000;
  let offsetMs = base;
  const now = () => Date.now() + offsetMs;
  const unsignedInvoices = { perAddress: 3, windowSeconds: 60 };

  beforeAll(async () => {
    const catalog = testCatalog({ callbackUrl: 'http://127.0.0.1:9/none' });
    const common = { db: target.db(), catalog, now, startWorker: false };
    // The socket's address counts: a forwarded header changes nothing.
    direct = await startGateway({ ...common, unsignedInvoices });
    // Two instances behind a trusted proxy on loopback: the forwarded client counts, in one window.
    proxiedA = await startGateway({ ...common, unsignedInvoices, trustedProxies: ['loopback'] });
    proxiedB = await startGateway({ ...common, unsignedInvoices, trustedProxies: ['loopback'] });
    off = await startGateway({ ...common, unsignedInvoices: { perAddress: 0, windowSeconds: 60 } });
  });
  afterAll(async () => {
    for (const gateway of [direct, proxiedA, proxiedB, off]) await gateway?.close();
  });

  const specBody = (reference = `lim-${randomUUID()}`) => ({
    public_key: 'pk_test_exchange_uah',
    reference_id: reference,
    description: 'deposit',
    service: 'payment_card_uah_hpp',
    currency: 'uah',
    amount: 500,
  });
  const create = async (gateway: RunningGateway, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${gateway.url}/public-api/payment-invoices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      // biome-ignore lint/suspicious/noExplicitAny: the tests read error and invoice answers
      json: (await response.json()) as Record<string, any>,
    };
  };
  const invoices = async (reference: string) =>
    (
      await target
        .db()
        .query<{ n: number }>('SELECT count(*)::int AS n FROM invoices WHERE reference_id = $1', [reference])
    ).rows[0]!.n;

  it('refuses the attempt past the limit with 429 in the error shape and retry-after, creating nothing', async () => {
    const taken = specBody();
    expect((await create(direct, taken)).status).toBe(201);
    // A repeat of a taken reference counts too (it is what a sweep for taken references sends).
    expect((await create(direct, taken)).status).toBe(401);
    expect((await create(direct, specBody())).status).toBe(201);
    const over = specBody();
    const refused = await create(direct, over, { 'x-forwarded-for': '198.51.100.1' });
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual({
      error: { code: 4107, name: 'rate_limited', message: expect.stringContaining('retry in') },
    });
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
    expect(await invoices(over.reference_id)).toBe(0);
    // The merchant's signed forms are not counted.
    expect((await create(direct, exchangeInvoice(`lim-${randomUUID()}`))).status).toBe(201);
    // The next window allows again.
    offsetMs += 60_000;
    try {
      expect((await create(direct, over)).status).toBe(201);
    } finally {
      offsetMs = base;
    }
  });

  it('counts the forwarded client behind a trusted proxy, across instances, an IPv6 client by its /64', async () => {
    const client = { 'x-forwarded-for': '203.0.113.7' };
    expect((await create(proxiedA, specBody(), client)).status).toBe(201);
    expect((await create(proxiedB, specBody(), client)).status).toBe(201);
    expect((await create(proxiedA, specBody(), client)).status).toBe(201);
    expect((await create(proxiedB, specBody(), client)).status).toBe(429);
    expect((await create(proxiedA, specBody(), { 'x-forwarded-for': '203.0.113.8' })).status).toBe(201);
    const v6 = ['2001:db8:0:7::1', '2001:db8:0:7::2', '2001:db8:0:7:ffff::3', '2001:db8:0:7::4'];
    const answers = [];
    for (const address of v6)
      answers.push((await create(proxiedA, specBody(), { 'x-forwarded-for': address })).status);
    expect(answers).toEqual([201, 201, 201, 429]);
  });

  it('with UNSIGNED_INVOICES_PER_ADDRESS=0 refuses every unsigned create as unsigned', async () => {
    const body = specBody();
    const refused = await create(off, body);
    expect(refused.status).toBe(401);
    expect(refused.json.error).toMatchObject({ name: 'bad_form_signature', field: 'signature' });
    expect(await invoices(body.reference_id)).toBe(0);
    expect((await create(off, exchangeInvoice(`lim-${randomUUID()}`))).status).toBe(201);
  });
});
