/**
 * A new user's browser client: a page served from another origin lists events with `fetch` in a
 * real browser (Debian chromium through playwright-core), pages through them with the `Link`
 * header and creates one with a token (a CORS preflight). A page from an origin not in
 * `CORS_ORIGIN` cannot read the answers.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { launchBrowser, type TestBrowser } from '@platform/testkit/browser';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, hmacToken, newId, openPgliteStore, startApp, type TestApp, validBody } from './helpers.js';

let app: TestApp;
let browser: TestBrowser;
let pageServer: Server;
let pageOrigin: string;
let otherOrigin: string;

/** A blank HTML page; the test runs its script in the page with `evaluate`, as the page's own code. */
async function servePage(): Promise<Server> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><title>events client</title><p>client</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

beforeAll(async () => {
  pageServer = await servePage();
  const { port } = pageServer.address() as AddressInfo;
  // Two origins for one server: the allowed one (127.0.0.1) and another (localhost).
  pageOrigin = `http://127.0.0.1:${port}`;
  otherOrigin = `http://localhost:${port}`;
  app = await startApp({ store: await openPgliteStore(), corsOrigin: [pageOrigin] });
  const seeder = await hmacToken('seeder');
  for (let i = 0; i < 5; i++) {
    const { status } = await call(app, `/events/${newId('browser')}`, {
      method: 'PUT',
      token: seeder,
      body: validBody,
    });
    expect(status).toBe(201);
  }
  browser = await launchBrowser();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await app?.store.close();
  await new Promise<void>((resolve) => pageServer?.close(() => resolve()));
});

async function openPage(origin: string): Promise<Page> {
  const page = await browser.context.newPage();
  await page.goto(`${origin}/`);
  return page;
}

describe('a page of another origin', () => {
  it('lists, pages with Link, and creates an event with a token', async () => {
    const page = await openPage(pageOrigin);
    const token = await hmacToken('browser-user');
    const id = newId('from-browser');
    const result = await page.evaluate(
      async ({ api, token, id, body }) => {
        const next = (link: string | null): string | undefined =>
          link
            ?.split(',')
            .map((part) => /<([^>]+)>;\s*rel="([^"]+)"/.exec(part.trim()))
            .find((match) => match?.[2] === 'next')?.[1];
        const ids: string[] = [];
        let url: string | undefined = `${api}/events?limit=2`;
        let total = -1;
        let pages = 0;
        while (url !== undefined && pages < 50) {
          const response = await fetch(url);
          total = Number(response.headers.get('x-total-count'));
          for (const event of (await response.json()) as { eventId: string }[]) ids.push(event.eventId);
          const target = next(response.headers.get('link'));
          url = target === undefined ? undefined : new URL(target, api).toString();
          pages += 1;
        }
        const created = await fetch(`${api}/events/${id}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const etag = created.headers.get('etag');
        const location = created.headers.get('location');
        const missing = await fetch(`${api}/events/no-such-event`);
        return {
          ids,
          total,
          pages,
          createdStatus: created.status,
          etag,
          location,
          createdBy: ((await created.json()) as { createdBy: string }).createdBy,
          missing: { status: missing.status, body: await missing.json() },
        };
      },
      { api: app.url, token, id, body: validBody },
    );
    expect(result.total).toBe(5);
    expect(result.ids).toHaveLength(5);
    expect(new Set(result.ids).size).toBe(5);
    expect(result.pages).toBe(3);
    expect(result.createdStatus).toBe(201);
    expect(result.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(result.location).toBe(`/events/${id}`);
    expect(result.createdBy).toBe('browser-user');
    // Error bodies are readable cross-origin too.
    expect(result.missing).toEqual({
      status: 404,
      body: { statusCode: 404, message: 'Event not found', error: 'Not Found' },
    });
    await page.close();
  });

  it('from an origin not allowed, cannot read the answers', async () => {
    const page = await openPage(otherOrigin);
    const outcome = await page.evaluate(async (api) => {
      try {
        await fetch(`${api}/events`);
        return 'read';
      } catch (error) {
        return error instanceof TypeError ? 'blocked' : 'other error';
      }
    }, app.url);
    expect(outcome).toBe('blocked');
    await page.close();
  });
});
