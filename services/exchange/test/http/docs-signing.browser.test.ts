import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { listenOnFreePort, type RunningApp } from '@platform/testkit/app';
import { launchBrowser, type TestBrowser } from '@platform/testkit/browser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { type DemoCredentials, seedDemo } from '../../src/seed.js';
import { reference, secretBox, usePostgresTarget } from '../support/targets.js';

/**
 * The /docs page signs "Try it out" (src/docs/page-signer.js): in Debian's chromium, a newcomer types
 * the demo key and secret into Authorize and runs POST /v3/auth/r/wallets; the exchange verifies the
 * signature with its own rule (src/auth/signature.ts) and answers 200 with the wallets.
 */
describe('the /docs page signs v3 requests in the browser', () => {
  const target = usePostgresTarget();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docs-signing-'));
  let server: RunningApp;
  let browser: TestBrowser;
  let demo: DemoCredentials;

  beforeAll(async () => {
    demo = await seedDemo(target.db(), secretBox, reference, dataDir);
    server = await listenOnFreePort(await buildApp({ db: target.db(), reference, secretBox }));
    browser = await launchBrowser({ viewport: { width: 1200, height: 900 } });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('Authorize with the demo key and secret, then Try it out on POST /v3/auth/r/wallets answers 200', async () => {
    const page = await browser.context.newPage();
    const requested: { url: string; headers: Record<string, string> }[] = [];
    page.on('request', (request) => requested.push({ url: request.url(), headers: request.headers() }));
    await page.goto(`${server.url}/docs`);

    // Authorize: the key in svcApiKey, the secret in svcApiSecret (nonce and signature left empty).
    await page.locator('button.authorize').first().click();
    for (const [scheme, value] of [
      ['svcApiKey', demo.apiKey],
      ['svcApiSecret', demo.apiSecret],
    ] as const) {
      const form = page.locator('.auth-container', { has: page.locator(`h4:has-text("${scheme}")`) });
      await form.locator('input').fill(value);
      await form.locator('button.authorize').click();
    }
    await page.locator('.auth-btn-wrapper button.btn-done').first().click();

    const operation = page.locator('#operations-v3_private-post_v3_auth_r_wallets');
    await operation.locator('.opblock-summary').first().click();
    await operation.locator('button.try-out__btn').click();
    await operation.locator('button.execute').click();

    const status = operation.locator('.live-responses-table .response .response-col_status').first();
    await expect.poll(async () => (await status.textContent())?.trim(), { timeout: 30_000 }).toBe('200');
    const body =
      (await operation
        .locator('.live-responses-table .response-col_description pre')
        .first()
        .textContent()) ?? '';
    const wallets = JSON.parse(body) as unknown[][];
    expect(wallets).toContainEqual(['exchange', 'BTC', 2.5, null, 2.5]);
    expect(wallets).toContainEqual(['exchange', 'LTC', 100, null, 100]);

    // The signed request carried the key, a nonce and a lower-case hex signature, never the secret;
    // everything the page loaded came from the exchange itself (no CDN).
    const signed = requested.find((r) => r.url.endsWith('/v3/auth/r/wallets'));
    expect(signed?.headers['svc-apikey']).toBe(demo.apiKey);
    expect(signed?.headers['svc-nonce']).toMatch(/^\d{13}$/);
    expect(signed?.headers['svc-signature']).toMatch(/^[0-9a-f]{96}$/);
    expect(JSON.stringify(requested)).not.toContain(demo.apiSecret);
    expect(
      requested.filter((r) => !r.url.startsWith(`${server.url}/`) && !r.url.startsWith('data:')),
    ).toEqual([]);
    await page.close();
  }, 120_000);
});
