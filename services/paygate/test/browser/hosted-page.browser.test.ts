import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { launchBrowser, type TestBrowser } from '@platform/testkit/browser';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_SECRET, testCatalog } from '../support/catalog.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { signed } from '../support/invoice-form.js';
import { type Receiver, startReceiver } from '../support/receiver.js';
import { usePgliteTarget } from '../support/targets.js';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown }[];
}

/** Runs axe-core in the page and returns the serious and critical violations. */
async function seriousViolations(page: Page): Promise<{ id: string; help: string; targets: string }[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run()).violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, help: v.help, targets: JSON.stringify(v.nodes.map((n) => n.target)) }));
}

describe('hosted payment page in a real browser (chromium)', () => {
  const target = usePgliteTarget();
  let receiver: Receiver;
  let gateway: RunningGateway;
  let withJs: TestBrowser;
  let withoutJs: TestBrowser;

  beforeAll(async () => {
    receiver = await startReceiver(SANDBOX_SECRET);
    const returnUrl = receiver.url.replace(/\/callback$/, '/return');
    gateway = await startGateway({
      db: target.db(),
      catalog: testCatalog({ callbackUrl: receiver.url, returnUrl }),
      workerIntervalMs: 50,
    });
    withJs = await launchBrowser({ bypassCSP: true });
    withoutJs = await launchBrowser({ javaScriptEnabled: false });
    mkdirSync(ARTIFACTS, { recursive: true });
  });
  afterAll(async () => {
    await withJs?.close();
    await withoutJs?.close();
    await gateway?.close();
    await receiver?.close();
  });

  let counter = 0;
  /** Creates an invoice over the API and opens its page the way a merchant site does: a form post of the payload. */
  async function openInvoice(
    browser: TestBrowser,
    amount = 500,
  ): Promise<{ page: Page; reference: string; id: string }> {
    const reference = `browser-${Date.now()}-${counter++}`;
    const response = await fetch(`${gateway.url}/public-api/payment-invoices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(
        signed({
          public_key: 'pk_test_exchange_uah',
          reference_id: reference,
          description: 'Deposit to the exchange',
          service: 'payment_card_uah_hpp',
          currency: 'uah',
          amount,
        }),
      ),
    });
    const { data } = (await response.json()) as {
      data: { id: string; active_payment: { action: string; payload: { name: string; value: string }[] } };
    };
    const page = await browser.context.newPage();
    const inputs = data.active_payment.payload
      .map((p) => `<input type="hidden" name="${p.name}" value="${p.value}">`)
      .join('');
    await page.setContent(
      `<form method="post" action="${data.active_payment.action}">${inputs}<button>Checkout</button></form>`,
    );
    await Promise.all([page.waitForURL(`${gateway.url}/**`), page.click('button')]);
    return { page, reference, id: data.id };
  }

  async function fillCard(page: Page, card: string, expiry = '12/30', cvc = '123'): Promise<void> {
    await page.getByLabel('Card number').fill(card);
    await page.getByLabel('Expiry date').fill(expiry);
    await page.getByLabel('Security code').fill(cvc);
  }

  it('pays with the success card using the keyboard only, passes axe, and returns to the merchant', async () => {
    const { page, reference, id } = await openInvoice(withJs);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Pay Exchange');
    const body = await page.textContent('main');
    for (const text of ['Exchange', '500.00 UAH', '7.50 UAH', '507.50 UAH']) expect(body).toContain(text);
    await page.screenshot({ path: `${ARTIFACTS}hosted-page.png`, fullPage: true });
    expect(await seriousViolations(page)).toEqual([]);

    // Keyboard only: Tab reaches the card number first, then expiry and code; Enter submits.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('card_number');
    await page.keyboard.type('4242424242424242');
    expect(await page.inputValue('#card_number')).toBe('4242 4242 4242 4242');
    await page.keyboard.press('Tab');
    await page.keyboard.type('12/30');
    await page.keyboard.press('Tab');
    await page.keyboard.type('123');
    await Promise.all([page.waitForURL('**/page?**'), page.keyboard.press('Enter')]);
    await page.getByText('Payment successful').waitFor();
    expect(await page.textContent('main')).toContain('424242******4242');
    await page.screenshot({ path: `${ARTIFACTS}hosted-page-success.png`, fullPage: true });
    expect(await seriousViolations(page)).toEqual([]);

    await Promise.all([
      page.waitForURL('**/return?**'),
      page.getByRole('link', { name: /Return to Exchange/ }).click(),
    ]);
    const back = new URL(page.url());
    expect(Object.fromEntries(back.searchParams)).toEqual({
      reference_id: reference,
      invoice_id: id,
      status: 'success',
    });

    await receiver.waitFor((all) =>
      all.some((r) => r.body.reference_id === reference && r.body.status === 'success'),
    );
    const mine = receiver.received.filter((r) => r.body.reference_id === reference);
    expect(mine.every((r) => r.signatureValid)).toBe(true);
    await page.close();
  });

  it('checks the card in the page before sending it (JavaScript on)', async () => {
    const { page } = await openInvoice(withJs, 100);
    const url = page.url();
    await fillCard(page, '4242 4242 4242 4241', '13/30', '1');
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.getByText('This card number is not valid. Check it for typos.').waitFor();
    expect(page.url()).toBe(url);
    expect(await page.getAttribute('#card_number', 'aria-invalid')).toBe('true');
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('card_number');
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  });

  it('goes through the 3-D Secure step with the code', async () => {
    const { page, reference } = await openInvoice(withJs, 300);
    await fillCard(page, '4000 0000 0000 3220');
    await Promise.all([page.waitForURL('**/page?**'), page.getByRole('button', { name: /^Pay / }).click()]);
    await page.getByRole('heading', { name: /Confirm your payment/ }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByLabel('Confirmation code').fill('123456');
    await Promise.all([
      page.waitForURL('**/page?**'),
      page.getByRole('button', { name: 'Confirm payment' }).click(),
    ]);
    await page.getByText('Payment successful').waitFor();
    await receiver.waitFor((all) =>
      all.some((r) => r.body.reference_id === reference && r.body.status === 'success'),
    );
    await page.close();
  });

  it('shows a declined card as failed and tells the merchant', async () => {
    const { page, reference } = await openInvoice(withJs, 200);
    await fillCard(page, '4000 0000 0000 0002');
    await Promise.all([page.waitForURL('**/page?**'), page.getByRole('button', { name: /^Pay / }).click()]);
    await page.getByText('Your card was declined').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await Promise.all([
      page.waitForURL('**/return?**'),
      page.getByRole('link', { name: /Return to Exchange/ }).click(),
    ]);
    expect(new URL(page.url()).searchParams.get('status')).toBe('failed');
    await receiver.waitFor((all) =>
      all.some((r) => r.body.reference_id === reference && r.body.status === 'failed'),
    );
    await page.close();
  });

  it('works with JavaScript disabled: server-side messages, then payment', async () => {
    const { page, reference } = await openInvoice(withoutJs, 500);
    await fillCard(page, '4242 4242 4242 4241', '01/20', '123');
    await Promise.all([page.waitForLoadState(), page.getByRole('button', { name: /^Pay / }).click()]);
    await page.getByText('This card number is not valid. Check it for typos.').first().waitFor();
    expect(await page.textContent('main')).toContain('This card has expired.');
    // The card number is not written back into the page: it is typed again.
    expect(await page.inputValue('#card_number')).toBe('');
    await page.screenshot({ path: `${ARTIFACTS}hosted-page-nojs-errors.png`, fullPage: true });
    await fillCard(page, '4242 4242 4242 4242', '12/30', '123');
    await Promise.all([page.waitForURL('**/page?**'), page.getByRole('button', { name: /^Pay / }).click()]);
    await page.getByText('Payment successful').waitFor();
    await receiver.waitFor((all) =>
      all.some((r) => r.body.reference_id === reference && r.body.status === 'success'),
    );
    await page.close();
  });
});
