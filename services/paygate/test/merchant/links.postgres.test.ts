import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_SECRET, testCatalog } from '../support/catalog.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { postInvoice } from '../support/invoice-form.js';
import { merchantPost } from '../support/merchant.js';
import { usePostgresTarget } from '../support/targets.js';

const target = usePostgresTarget();

describe('payment links', () => {
  let gateway: RunningGateway;
  let offsetMs = 0;
  beforeAll(async () => {
    gateway = await startGateway({
      db: target.db(),
      catalog: testCatalog({ callbackUrl: 'http://127.0.0.1:9/none' }),
      now: () => Date.now() + offsetMs,
      startWorker: false,
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const invoice = async () => {
    const reference = `dep-${randomUUID()}`;
    const response = await postInvoice(gateway.url, reference, '500');
    expect(response.status).toBe(201);
    return reference;
  };
  const link = async (reference: string, expiresIn?: number) => {
    const answer = await merchantPost(
      gateway.url,
      '/merchant-api/payment-links',
      { invoice_reference_id: reference, ...(expiresIn ? { expires_in: expiresIn } : {}) },
      SANDBOX_SECRET,
    );
    expect(answer.status).toBe(201);
    return answer.json.data as { url: string; expires_at: string };
  };
  const open = (url: string) => fetch(url, { redirect: 'manual' });

  it('opens the hosted page once; a second click gets 410', async () => {
    const { url, expires_at } = await link(await invoice(), 600);
    expect(url.startsWith(`${gateway.url}/public-api/payment-links/`)).toBe(true);
    expect(Date.parse(expires_at)).toBeGreaterThan(Date.now());
    const clicks = await Promise.all([open(url), open(url), open(url)]);
    const opened = clicks.filter((c) => c.status === 303);
    expect(opened).toHaveLength(1);
    expect(opened[0]?.headers.get('location')).toMatch(
      /\/public-api\/payment-invoices\/page\?invoice_id=inv_/,
    );
    expect(clicks.filter((c) => c.status === 410)).toHaveLength(2);
    const page = await fetch(opened[0]?.headers.get('location') ?? '');
    expect(page.status).toBe(200);
  });

  it('refuses an expired link, never outliving its invoice, and an unknown one', async () => {
    const reference = await invoice();
    const { url, expires_at } = await link(reference, 604_800);
    // The invoice expires after INVOICE_TTL_SECONDS (1800 s): the link does not outlive it.
    expect(Date.parse(expires_at) - Date.now()).toBeLessThanOrEqual(1_800_000);
    offsetMs = 1_800_000 + 1_000;
    try {
      expect((await open(url)).status).toBe(410);
    } finally {
      offsetMs = 0;
    }
    expect((await open(`${gateway.url}/public-api/payment-links/nope`)).status).toBe(410);
    const missing = await merchantPost(
      gateway.url,
      '/merchant-api/payment-links',
      { invoice_reference_id: 'no-such' },
      SANDBOX_SECRET,
    );
    expect(missing.status).toBe(404);
  });
});
