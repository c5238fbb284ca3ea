import { listenOnFreePort, type RunningApp } from '@platform/testkit/app';
import { afterAll, beforeAll } from 'vitest';
import { updateAccount } from '../../src/accounts/store.js';
import type { Scope } from '../../src/apikeys/store.js';
import { issueApiKey } from '../../src/apikeys/store.js';
import { buildApp } from '../../src/app.js';
import { defaultPaygateConfig } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import type { App } from '../../src/http/typed.js';
import { createSmtpMailer } from '../../src/mail/smtp.js';
import { createWallet } from '../../src/wallet/setup.js';
import type { Wallet } from '../../src/wallet/wallet.js';
import { units } from '../codes/support.js';
import { credit, newAccount } from '../support/accounts.js';
import { v3Headers } from '../support/signing.js';
import { type SmtpSink, startSmtpSink } from '../support/smtp-sink.js';
import { reference, secretBox, type Target } from '../support/targets.js';
import { testWalletConfig } from '../wallet/support.js';

export const HOUR = 3_600_000;

/** A signed v3 client of one key over real HTTP (fetch), as an existing client library calls. */
export function httpClient(baseUrl: () => string, apiKey: string, secret: string) {
  return async (path: string, body: unknown = {}) => {
    const text = JSON.stringify(body);
    const response = await fetch(`${baseUrl()}${path}`, {
      method: path === '/v3/auth/svc_codes/redeem' ? 'PUT' : 'POST',
      headers: v3Headers(apiKey, secret, path, text),
      body: text,
    });
    // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON the server answered
    return { status: response.status, body: (await response.json()) as any };
  };
}
export type HttpClient = ReturnType<typeof httpClient>;

export interface BookServer {
  readonly app: App;
  readonly wallet: Wallet;
  readonly url: string;
}

/**
 * Real listening servers on the target's storage, one per lock time (each with its own wallet on the
 * sandbox custody, no background loop: tests run `wallet.tick()`), sending mail to one SMTP sink; the
 * payment gateway is down (nothing listens on port 1).
 */
export function useBookServers(target: Target, locks: Record<string, number>) {
  const servers = new Map<string, BookServer & { running: RunningApp }>();
  let sink: SmtpSink | undefined;
  beforeAll(async () => {
    sink = await startSmtpSink();
    for (const [name, lockMs] of Object.entries(locks)) {
      const wallet = await createWallet({ db: target.db(), reference, config: testWalletConfig() });
      const app = await buildApp({
        db: target.db(),
        reference,
        secretBox,
        wallet,
        nonceWindowMs: 86_400_000,
        withdrawAddresses: { lockMs },
        paygate: { ...defaultPaygateConfig(), url: 'http://127.0.0.1:1', timeoutMs: 2_000 },
        mail: {
          mailer: createSmtpMailer({
            url: sink.url,
            user: undefined,
            password: undefined,
            requireTls: false,
            tlsRejectUnauthorized: true,
            from: 'Exchange <no-reply@exchange.test>',
          }),
          publicUrl: 'http://exchange.test',
          linkTtlMs: HOUR,
        },
      });
      const running = await listenOnFreePort(app);
      servers.set(name, { app, wallet, url: running.url, running });
    }
  });
  afterAll(async () => {
    for (const server of servers.values()) await server.running.close();
    await sink?.close();
  });
  return {
    server: (name: string): BookServer => servers.get(name)!,
    sink: () => sink!,
  };
}

/** A fresh account with 1 BTC, 10 ETH, 100 XRP, 10 LTC and 1000 UAH. */
export async function fundedAccount(db: Database, flags: { withdrawConfirmation?: boolean } = {}) {
  const account = await newAccount(db);
  if (flags.withdrawConfirmation) await updateAccount(db, account.id, { withdrawConfirmation: true });
  for (const [currency, amount] of [
    ['btc', '1'],
    ['eth', '10'],
    ['xrp', '100'],
    ['ltc', '10'],
    ['uah', '1000'],
  ] as const) {
    await credit(db, account.id, currency, units(currency, amount));
  }
  return account;
}

/** A key of an account with `scopes`, as a signed HTTP client of `server`. */
export async function keyOf(db: Database, accountId: number, scopes: Scope[], server: () => BookServer) {
  const { key, secret } = await issueApiKey(db, secretBox, accountId, scopes);
  return httpClient(() => server().url, key.publicKey, secret);
}
