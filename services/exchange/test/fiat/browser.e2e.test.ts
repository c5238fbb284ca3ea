import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser, type TestBrowser } from '@platform/testkit/browser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { balancesOf } from '../../src/ledger/store.js';
import { accountWithKey } from '../support/accounts.js';
import { client } from '../support/client.js';
import { postJson } from './gateway-client.js';
import { eventually, useFiatPlatform } from './platform.js';

type Page = Awaited<ReturnType<TestBrowser['context']['newPage']>>;

/** Screenshots go to a temporary folder removed after the run; SCREENSHOTS_DIR keeps them there. */
const KEEP = process.env.SCREENSHOTS_DIR;
const ARTIFACTS = `${KEEP ?? mkdtempSync(join(tmpdir(), 'exchange-fiat-browser-'))}/`;
const UAH = 1_000_000n; // ledger minor units per hryvnia (ledger_precision 6)

/**
 * The whole fiat deposit flow in a real browser (Debian chromium via playwright-core): the exchange
 * (in-process, on a free port) and the gateway (a real process) wired to each other.
 */
describe('fiat deposit end to end in a browser', () => {
  const platform = useFiatPlatform();
  let browser: TestBrowser;

  beforeAll(async () => {
    browser = await launchBrowser();
    mkdirSync(ARTIFACTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    if (!KEEP) rmSync(ARTIFACTS, { recursive: true, force: true });
  });

  async function uahAvailable(accountId: number): Promise<bigint> {
    return (await balancesOf(platform.db, accountId)).find((b) => b.currency === 'uah')?.available ?? 0n;
  }

  async function depositStatus(id: number): Promise<string | undefined> {
    const { rows } = await platform.db.query<{ status: string }>(
      'SELECT status FROM deposits WHERE id = $1',
      [id],
    );
    return rows[0]?.status;
  }

  /** Submits `{action, params}` from a page of the merchant's site, as a client app does. */
  async function openForm(action: string, params: { name: string; value: string }[]): Promise<Page> {
    const page = await browser.context.newPage();
    const attr = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
    const inputs = params
      .map((p) => `<input type="hidden" name="${attr(p.name)}" value="${attr(p.value)}">`)
      .join('');
    await page.setContent(
      `<form method="post" action="${attr(action)}">${inputs}<button>Pay</button></form>`,
    );
    await Promise.all([page.waitForURL(`${platform.gatewayUrl}/**`), page.click('button')]);
    return page;
  }

  /** Steps 2 and 3 of the spec's fiat deposit flow: the deposit at the exchange, the invoice at the gateway. */
  async function depositAndInvoice(amount: number) {
    const user = await accountWithKey(platform.db, ['read']);
    const api = client(() => platform.exchange, user.apiKey, user.secret);
    const keys = (await api.v3('/v3/auth/me')).json().public_keys;
    const deposit = (await api.v3('/v3/auth/deposit', { currency: 'uah', amount })).json();
    expect(deposit.deposit_id).toEqual(expect.any(Number));
    const invoice = await postJson(`${platform.gatewayUrl}/public-api/payment-invoices`, {
      public_key: keys.deposit_sdk_uah_public_key,
      reference_id: String(deposit.deposit_id),
      description: `Deposit ${deposit.deposit_id}`,
      service: deposit.provider,
      currency: 'uah',
      amount,
      expires: deposit.expires,
      signature: deposit.signature,
    });
    expect(invoice.status).toBe(201);
    const page = await openForm(
      invoice.json.data.active_payment.action,
      invoice.json.data.active_payment.payload,
    );
    return { user, api, deposit, page };
  }

  async function payWith(page: Page, card: string): Promise<void> {
    await page.getByLabel('Card number').fill(card);
    await page.getByLabel('Expiry date').fill('12/39');
    await page.getByLabel('Security code').fill('123');
    await Promise.all([page.waitForURL('**/page?**'), page.getByRole('button', { name: /^Pay / }).click()]);
  }

  it('credits 500 UAH paid with the success card exactly once, and returns the payer to the exchange', async () => {
    const { user, api, deposit, page } = await depositAndInvoice(500);
    const main = (await page.textContent('main'))?.replace(/\u00a0/g, ' ');
    for (const text of ['UAH 500.00', 'UAH 7.50', 'UAH 507.50']) expect(main).toContain(text);
    const hostedStyle = await page.textContent('style');
    await page.screenshot({ path: `${ARTIFACTS}fiat-hosted-page.png`, fullPage: true });
    await payWith(page, '4242 4242 4242 4242');
    await page.getByText('Payment successful').waitFor();
    await Promise.all([
      page.waitForURL(`${platform.exchangeUrl}/v3/paygate/return?**`),
      page.getByRole('link', { name: /Return to Exchange/ }).click(),
    ]);
    expect(await page.textContent('h1')).toBe('Payment received');
    expect(await page.textContent('#reference')).toBe(String(deposit.deposit_id));
    // The return page wears the hosted page's look (one stylesheet, @platform/checkout-look).
    expect(await page.textContent('style')).toBe(hostedStyle);
    await page.screenshot({ path: `${ARTIFACTS}fiat-return-page.png`, fullPage: true });
    await page.close();

    await eventually(async () =>
      (await depositStatus(deposit.deposit_id)) === 'credited' ? true : undefined,
    );
    expect(await uahAvailable(user.account.id)).toBe(500n * UAH);
    // Every callback the gateway sent has been acknowledged (its outbox is empty, the readiness
    // signal), and nothing more was credited by them.
    await eventually(async () => ((await platform.undeliveredCallbacks()) === 0 ? true : undefined));
    expect(await uahAvailable(user.account.id)).toBe(500n * UAH);
    const wallets = (await api.v3('/v3/auth/r/wallets')).json() as unknown[][];
    expect(wallets).toContainEqual(['exchange', 'UAH', 500, null, 500]);
  });

  it('credits a payment confirmed through the 3-D Secure step', async () => {
    const { user, deposit, page } = await depositAndInvoice(300);
    await payWith(page, '4000 0000 0000 3220');
    await page.getByRole('heading', { name: /Confirm your payment/ }).waitFor();
    expect(await depositStatus(deposit.deposit_id)).toBe('pending');
    await page.getByLabel('Confirmation code').fill('123456');
    await Promise.all([
      page.waitForURL('**/page?**'),
      page.getByRole('button', { name: 'Confirm payment' }).click(),
    ]);
    await page.getByText('Payment successful').waitFor();
    await page.close();
    await eventually(async () =>
      (await depositStatus(deposit.deposit_id)) === 'credited' ? true : undefined,
    );
    expect(await uahAvailable(user.account.id)).toBe(300n * UAH);
  });

  it('leaves the balance unchanged when the card is declined', async () => {
    const { user, deposit, page } = await depositAndInvoice(200);
    await payWith(page, '4000 0000 0000 0002');
    await page.getByText('Your card was declined').waitFor();
    // The invoice is open for another card; the payer gives up instead.
    expect(await depositStatus(deposit.deposit_id)).toBe('pending');
    await Promise.all([
      page.waitForURL('**/page?**'),
      page.getByRole('button', { name: /Cancel and return to Exchange/ }).click(),
    ]);
    await Promise.all([
      page.waitForURL(`${platform.exchangeUrl}/v3/paygate/return?**`),
      page.getByRole('link', { name: /Return to Exchange/ }).click(),
    ]);
    expect(await page.textContent('h1')).toBe('Payment not completed');
    await page.close();
    await eventually(async () =>
      (await depositStatus(deposit.deposit_id)) === 'canceled' ? true : undefined,
    );
    expect(await uahAvailable(user.account.id)).toBe(0n);
  });

  it('pays through the simplified deposit form (payment_service "default")', async () => {
    const user = await accountWithKey(platform.db, ['read']);
    const api = client(() => platform.exchange, user.apiKey, user.secret);
    const form = (
      await api.v3('/v3/auth/deposit', { currency: 'uah', amount: 250, payment_service: 'default' })
    ).json();
    const page = await openForm(form.action, form.params);
    expect((await page.textContent('main'))?.replace(/\u00a0/g, ' ')).toContain('UAH 250.00');
    await payWith(page, '4242 4242 4242 4242');
    await page.getByText('Payment successful').waitFor();
    await page.close();
    const reference = Number(form.params.find((p: { name: string }) => p.name === 'reference_id').value);
    await eventually(async () => ((await depositStatus(reference)) === 'credited' ? true : undefined));
    expect(await uahAvailable(user.account.id)).toBe(250n * UAH);
  });
});
