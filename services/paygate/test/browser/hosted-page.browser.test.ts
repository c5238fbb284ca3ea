import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser, type TestBrowser } from '@platform/testkit/browser';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_SECRET, testCatalog } from '../support/catalog.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { signed } from '../support/invoice-form.js';
import { type Receiver, startReceiver } from '../support/receiver.js';
import { usePgliteTarget } from '../support/targets.js';

/**
 * Screenshots go to a temporary folder removed after the run; set SCREENSHOTS_DIR to keep them
 * (`SCREENSHOTS_DIR=/tmp/shots npx vitest run services/paygate/test/browser/hosted-page.browser.test.ts`).
 */
const KEEP = process.env.SCREENSHOTS_DIR;
const SHOTS = KEEP ?? mkdtempSync(join(tmpdir(), 'paygate-hosted-page-'));
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1200, height: 900 };

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

/** Screenshots of the page at phone and desktop width; the card keeps a margin to the screen's edges at both. */
async function shoot(page: Page, name: string): Promise<void> {
  for (const [label, size] of [
    ['390', PHONE],
    ['1200', DESKTOP],
  ] as const) {
    await page.setViewportSize(size);
    const box = await page.locator('main').boundingBox();
    expect(box?.x, `${name} at ${label} px: the card's left margin`).toBeGreaterThanOrEqual(12);
    expect((box?.x ?? 0) + (box?.width ?? 0), `${name} at ${label} px: right margin`).toBeLessThanOrEqual(
      size.width - 12,
    );
    await page.screenshot({ path: join(SHOTS, `${name}-${label}.png`), fullPage: true });
  }
  await page.setViewportSize(DESKTOP);
}

/** Text with the no-break spaces of locale formats made plain. */
const plain = (text: string | null) => (text ?? '').replace(/[\u00a0\u202f]/g, ' ');

describe('hosted payment page in a real browser (chromium)', () => {
  const target = usePgliteTarget();
  let receiver: Receiver;
  let gateway: RunningGateway;
  let browser: TestBrowser;

  beforeAll(async () => {
    receiver = await startReceiver(SANDBOX_SECRET);
    const returnUrl = receiver.url.replace(/\/callback$/, '/return');
    gateway = await startGateway({
      db: target.db(),
      catalog: testCatalog({ callbackUrl: receiver.url, returnUrl }),
      workerIntervalMs: 50,
      cardAttemptsMax: 3,
    });
    browser = await launchBrowser({ bypassCSP: true, viewport: DESKTOP });
    mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await receiver?.close();
    if (!KEEP) rmSync(SHOTS, { recursive: true, force: true });
  });

  let counter = 0;
  /**
   * Creates an invoice over the API and opens its page the way a merchant site does: a form post of
   * the payload. Every answer of 400 or more the page's loads get (a favicon.ico 404) is collected.
   */
  async function openInvoice(
    options: { amount?: number; locale?: string; acceptLanguage?: string } = {},
  ): Promise<{ page: Page; reference: string; id: string; failedLoads: string[] }> {
    const reference = `browser-${Date.now()}-${counter++}`;
    const response = await fetch(`${gateway.url}/public-api/payment-invoices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        ...signed({
          public_key: 'pk_test_exchange_uah',
          reference_id: reference,
          description: 'Deposit to the exchange',
          service: 'payment_card_uah_hpp',
          currency: 'uah',
          amount: options.amount ?? 500,
        }),
        ...(options.locale ? { locale: options.locale } : {}),
      }),
    });
    const { data } = (await response.json()) as {
      data: { id: string; active_payment: { action: string; payload: { name: string; value: string }[] } };
    };
    const page = await browser.context.newPage();
    const failedLoads: string[] = [];
    page.on('response', (r) => {
      if (r.status() >= 400) failedLoads.push(`${r.status()} ${r.url()}`);
    });
    if (options.acceptLanguage) await page.setExtraHTTPHeaders({ 'accept-language': options.acceptLanguage });
    const inputs = data.active_payment.payload
      .map((p) => `<input type="hidden" name="${p.name}" value="${p.value}">`)
      .join('');
    await page.setContent(
      `<form method="post" action="${data.active_payment.action}">${inputs}<button>Checkout</button></form>`,
    );
    await Promise.all([page.waitForURL(`${gateway.url}/**`), page.click('button')]);
    return { page, reference, id: data.id, failedLoads };
  }

  async function fillCard(page: Page, labels: Labels, card: string, expiry = '12/30', cvc = '123') {
    await page.getByLabel(labels.card).fill(card);
    await page.getByLabel(labels.expiry).fill(expiry);
    await page.getByLabel(labels.cvc).fill(cvc);
  }
  interface Labels {
    card: string;
    expiry: string;
    cvc: string;
  }
  const EN: Labels = { card: 'Card number', expiry: 'Expiry date', cvc: 'Security code' };

  async function submit(page: Page, button: RegExp | string): Promise<void> {
    await Promise.all([page.waitForURL('**/page?**'), page.getByRole('button', { name: button }).click()]);
  }

  it('pays with the success card using the keyboard only, passes axe at 390 and 1200 px, and returns to the merchant', async () => {
    const { page, reference, id, failedLoads } = await openInvoice();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Pay Exchange');
    const body = plain(await page.textContent('main'));
    for (const text of ['Exchange', 'UAH 500.00', 'UAH 7.50', 'Total to pay', 'UAH 507.50']) {
      expect(body).toContain(text);
    }
    // The border above the total runs unbroken across both columns.
    const [label, value] = await Promise.all(
      ['dt.total', 'dd.total'].map(async (selector) => page.locator(selector).boundingBox()),
    );
    expect(Math.abs((label?.x ?? 0) + (label?.width ?? 0) - (value?.x ?? -100))).toBeLessThan(1);
    await shoot(page, 'card-en');
    expect(await seriousViolations(page)).toEqual([]);

    // Keyboard only: Tab reaches the card number first, then expiry and code; Enter submits.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('card_number');
    await page.keyboard.type('4242424242424242');
    expect(await page.inputValue('#card_number')).toBe('4242 4242 4242 4242');
    expect(await page.textContent('#card_number-brand')).toBe('Visa');
    await page.keyboard.press('Tab');
    await page.keyboard.type('12/30');
    await page.keyboard.press('Tab');
    await page.keyboard.type('123');
    await Promise.all([page.waitForURL('**/page?**'), page.keyboard.press('Enter')]);
    await page.getByText('Payment successful').waitFor();
    const paid = plain(await page.textContent('main'));
    expect(paid).toContain('Visa 424242******4242');
    expect(paid).toContain('Total paid');
    expect(paid).not.toContain('Total to pay');
    await shoot(page, 'success-en');
    expect(await seriousViolations(page)).toEqual([]);
    // Nothing the page loaded answered an error (the browser's favicon.ico request included).
    const icon = await fetch(`${gateway.url}/favicon.ico`);
    expect([icon.status, icon.headers.get('content-type')]).toEqual([200, 'image/x-icon']);
    expect(failedLoads).toEqual([]);

    await Promise.all([
      page.waitForURL('**/return?**'),
      page.getByRole('link', { name: /Return to Exchange/ }).click(),
    ]);
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({
      reference_id: reference,
      invoice_id: id,
      status: 'success',
    });
    await receiver.waitFor((all) =>
      all.some((r) => r.body.reference_id === reference && r.body.status === 'success'),
    );
    expect(
      receiver.received.filter((r) => r.body.reference_id === reference).every((r) => r.signatureValid),
    ).toBe(true);
    await page.close();
  });

  it('groups the card number as typed and shows its brand; checks the card before sending it', async () => {
    const { page } = await openInvoice({ amount: 100 });
    const url = page.url();
    await page.getByLabel('Card number').pressSequentially('378282246310005');
    expect(await page.inputValue('#card_number')).toBe('3782 822463 10005');
    expect(await page.textContent('#card_number-brand')).toBe('American Express');
    await page.getByLabel('Card number').fill('');
    await page.getByLabel('Card number').pressSequentially('5555555555554444');
    expect(await page.inputValue('#card_number')).toBe('5555 5555 5555 4444');
    expect(await page.textContent('#card_number-brand')).toBe('Mastercard');
    await shoot(page, 'typing-en');
    await fillCard(page, EN, '4242 4242 4242 4241', '13/30', '1');
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.getByText('This card number is not valid. Check it for typos.').waitFor();
    expect(page.url()).toBe(url);
    expect(await page.getAttribute('#card_number', 'aria-invalid')).toBe('true');
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('card_number');
    expect(await seriousViolations(page)).toEqual([]);
    // The server checks the same without the page's script (form.submit() skips the submit handler).
    await Promise.all([
      page.waitForLoadState(),
      page.evaluate("document.getElementById('card-form').submit()"),
    ]);
    await page.locator('#error-summary').getByText('This card number is not valid').waitFor();
    expect(await page.textContent('#error-summary')).toContain('Enter the expiry date as MM/YY, e.g. 12/30.');
    expect(await page.inputValue('#card_number')).toBe('');
    await page.close();
  });

  it('after a declined card, another card pays the same invoice; the 3-D Secure step can be cancelled', async () => {
    const { page, reference, id } = await openInvoice({ amount: 200 });
    await fillCard(page, EN, '4000 0000 0000 0002');
    await submit(page, /^Pay /);
    const alert = page.locator('#attempt-summary');
    await alert.getByText('Your card was declined.').waitFor();
    expect(await alert.textContent()).toContain('2 attempts left');
    await shoot(page, 'declined-en');
    expect(await seriousViolations(page)).toEqual([]);

    // The 3-D Secure card, then the payer cancels the bank's step: back to the card form.
    await fillCard(page, EN, '4000 0000 0000 3220');
    await submit(page, /^Pay /);
    await page.getByRole('heading', { name: /Confirm your payment/ }).waitFor();
    expect(await page.textContent('main')).toContain('Visa 400000******3220');
    await shoot(page, 'challenge-en');
    expect(await seriousViolations(page)).toEqual([]);
    await submit(page, 'Cancel and use another card');
    await alert.getByText('You cancelled the confirmation with your bank.').waitFor();
    expect(await alert.textContent()).toContain('1 attempt left');

    // The last attempt: the 3-D Secure card with the right code pays the same invoice.
    await fillCard(page, EN, '4000 0000 0000 3220');
    await submit(page, /^Pay /);
    await page.getByLabel('Confirmation code').fill('123456');
    await submit(page, 'Confirm payment');
    await page.getByText('Payment successful').waitFor();
    expect(page.url()).toContain(id);
    await receiver.waitFor((all) =>
      all.some((r) => r.body.reference_id === reference && r.body.status === 'success'),
    );
    // The merchant heard of no failure of the invoice (created, processing once, success), and of each
    // card that did not pay (attempt_failed, not a status of the invoice).
    const mine = receiver.received.filter((r) => r.body.reference_id === reference);
    const statuses = mine.map((r) => r.body.status);
    expect(statuses).not.toContain('failed');
    expect(new Set(statuses)).toEqual(new Set(['created', 'attempt_failed', 'processing', 'success']));
    expect(mine.filter((r) => r.body.status === 'attempt_failed').map((r) => r.body.failure_reason)).toEqual([
      'declined',
      'authentication_canceled',
    ]);
    await page.close();
  });

  it("shows the page, its errors and its 3-D Secure step in the payer's language", async () => {
    const languages = [
      {
        name: 'uk',
        // The browser's language decides.
        open: { acceptLanguage: 'uk-UA,uk;q=0.9,en;q=0.5' },
        labels: { card: 'Номер картки', expiry: 'Термін дії', cvc: 'Код безпеки' },
        texts: [
          'Оплата для Exchange',
          '500,00 ₴',
          '7,50 ₴',
          'Усього до сплати',
          'Від 12 до 19 цифр, як на картці',
        ],
        invalid: 'Цей номер картки недійсний. Перевірте, чи немає помилок.',
        confirm: { heading: 'Підтвердьте оплату', code: 'Код підтвердження', button: 'Підтвердити оплату' },
        paid: 'Оплата успішна',
      },
      {
        name: 'ru',
        // The merchant's `locale` wins over the browser's English.
        open: { locale: 'ru', acceptLanguage: 'en-US,en;q=0.9' },
        labels: { card: 'Номер карты', expiry: 'Срок действия', cvc: 'Код безопасности' },
        texts: ['Оплата для Exchange', '500,00 ₴', 'Итого к оплате', 'От 12 до 19 цифр, как на карте'],
        invalid: 'Этот номер карты недействителен. Проверьте, нет ли опечаток.',
        confirm: { heading: 'Подтвердите оплату', code: 'Код подтверждения', button: 'Подтвердить оплату' },
        paid: 'Оплата прошла успешно',
      },
    ];
    for (const language of languages) {
      const { page } = await openInvoice({ amount: 500, ...language.open });
      expect(await page.getAttribute('html', 'lang')).toBe(language.name);
      const body = plain(await page.textContent('main'));
      for (const text of language.texts) expect(body, language.name).toContain(text);
      await shoot(page, `card-${language.name}`);
      await page.setViewportSize(PHONE);
      const [expiryBox, cvcBox] = await Promise.all([
        page.locator('#expiry').boundingBox(),
        page.locator('#cvc').boundingBox(),
      ]);
      expect(expiryBox?.y, `${language.name}: expiry and code inputs on one line`).toBe(cvcBox?.y);
      await page.setViewportSize(DESKTOP);
      expect(await seriousViolations(page)).toEqual([]);
      await fillCard(page, language.labels, '4242 4242 4242 4241');
      await page.getByRole('button', { name: /Сплатити|Оплатить/ }).click();
      await page.locator('#card_number-error').getByText(language.invalid).waitFor();
      await fillCard(page, language.labels, '4000 0000 0000 3220');
      await submit(page, /Сплатити|Оплатить/);
      await page.getByRole('heading', { name: language.confirm.heading }).waitFor();
      await shoot(page, `challenge-${language.name}`);
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByLabel(language.confirm.code).fill('123456');
      await submit(page, language.confirm.button);
      await page.getByRole('heading', { name: language.paid }).waitFor();
      await page.close();
    }
  });
});
