import { listenOnFreePort, type RunningApp } from '@platform/testkit/app';
import type { Registry } from 'prom-client';
import { afterAll, beforeAll } from 'vitest';
import { type AppOptions, buildApp } from '../../src/app.js';
import { defaultFeedConfig, type FeedConfig } from '../../src/config.js';
import type { App } from '../../src/http/typed.js';
import { accountWithKey, credit } from '../support/accounts.js';
import { type Client, client } from '../support/client.js';
import { reference, secretBox, type Target } from '../support/targets.js';
import { FeedClient } from './ws-client.js';

export interface Trader {
  readonly accountId: number;
  readonly apiKey: string;
  readonly secret: string;
  readonly http: Client;
}

/** The app listening on a port of its own with the feed, and traders funded in btc and usdt. */
export function useFeedApp(
  target: Target,
  feed: Partial<FeedConfig> = {},
  now?: () => number,
  metrics?: Registry,
  /** More app options (request limits...). */
  options: Partial<AppOptions> = {},
) {
  let app: App;
  let running: RunningApp;
  const traders: Trader[] = [];
  beforeAll(async () => {
    app = await buildApp({
      db: target.db(),
      reference,
      secretBox,
      feed: { ...defaultFeedConfig(), ...feed },
      ...(now ? { now } : {}),
      ...(metrics ? { metrics } : {}),
      ...options,
    });
    running = await listenOnFreePort(app);
  });
  afterAll(async () => {
    await running?.close();
  });
  return {
    app: () => app,
    wsUrl: () => `${running.url.replace('http', 'ws')}/v3/ws`,
    url: () => running.url,
    connect: () => FeedClient.open(`${running.url.replace('http', 'ws')}/v3/ws`),
    /** A new account with a read+trade key (or `scopes`) and 10 btc, 100 eth and 1,000,000 usdt. */
    async trader(scopes: ('read' | 'trade' | 'withdraw')[] = ['read', 'trade']): Promise<Trader> {
      const { account, apiKey, secret } = await accountWithKey(target.db(), scopes);
      await credit(target.db(), account.id, 'btc', 10n * 10n ** 10n);
      await credit(target.db(), account.id, 'usdt', 1_000_000n * 10n ** 8n);
      await credit(target.db(), account.id, 'eth', 100n * 10n ** 8n);
      const trader = { accountId: account.id, apiKey, secret, http: client(() => app, apiKey, secret) };
      traders.push(trader);
      return trader;
    },
  };
}
