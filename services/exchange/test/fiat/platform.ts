import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { startTcpFront, type TcpFront } from '@platform/testkit/front';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { buildApp } from '../../src/app.js';
import { defaultPaygateConfig, type PaygateConfig } from '../../src/config.js';
import type { App } from '../../src/http/typed.js';
import { createSmtpMailer } from '../../src/mail/smtp.js';
import { type SmtpSink, startSmtpSink } from '../support/smtp-sink.js';
import { reference, secretBox, usePostgresTarget } from '../support/targets.js';

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
const GATEWAY_DIR = path.join(REPO, 'services/paygate');

export interface FiatPlatform {
  /** The exchange, in-process, on port 0 behind a front (the gateway calls it back). */
  readonly exchange: App;
  readonly exchangeUrl: string;
  /** The payment gateway, a real process on port 0 behind a front, with its own database. */
  readonly gatewayUrl: string;
  readonly gateway: ServiceProcess;
  readonly db: ReturnType<ReturnType<typeof usePostgresTarget>['db']>;
  /** Receives the exchange's mail (withdrawal confirmations) over real SMTP. */
  readonly mail: SmtpSink;
  /** Callbacks of the gateway not yet acknowledged by the exchange (its outbox). */
  undeliveredCallbacks(): Promise<number>;
  /** Stops the gateway process and starts it again at the same address (its front) and database. */
  restartGateway(): Promise<void>;
  /** The gateway's database (its tables are the gateway's business: tests read them for evidence). */
  readonly gatewayDatabaseUrl: string;
}

export interface FiatPlatformOptions {
  /** More gateway settings, asked for once the exchange listens (at `exchangeUrl`). */
  readonly gatewayEnv?: (exchangeUrl: string) => NodeJS.ProcessEnv | Promise<NodeJS.ProcessEnv>;
  /** Exchange settings over the defaults (e.g. a rotated merchant secret). */
  readonly paygate?: Partial<PaygateConfig>;
  /**
   * Cards a payer may try on one invoice (the gateway's `CARD_ATTEMPTS_MAX`): `1` makes a declined
   * card fail its invoice (and call back) at once instead of leaving it open for another card.
   * @default the gateway's default (3)
   */
  readonly cardAttemptsMax?: number;
}

/**
 * The exchange and the gateway wired to each other, as `npm start` runs them: the exchange's
 * PAYGATE_URL is the gateway, the gateway's merchant `exchange` calls back the exchange. Both on
 * PostgreSQL (one throw-away database each). Payouts settle after 300 ms, the dispatcher polls
 * every 200 ms, callbacks are retried from 100 ms.
 */
export function useFiatPlatform(options: FiatPlatformOptions = {}): FiatPlatform {
  const target = usePostgresTarget();
  const gatewayDb = useTestDatabase('paygate');
  let exchange: App | undefined;
  let exchangeUrl = '';
  let sink: SmtpSink | undefined;
  let gateway: ServiceProcess | undefined;
  // Stable addresses owned by this test process (see TcpFront): the gateway restarts on a new port
  // behind the same URL, and no other process can take that URL's port meanwhile.
  let gatewayFront: TcpFront | undefined;
  let exchangeFront: TcpFront | undefined;
  let configDir = '';
  let env: NodeJS.ProcessEnv = {};

  const startGateway = async () => {
    gateway = await startServiceProcess({
      sandboxSecrets: true,
      name: 'paygate',
      entry: path.join(GATEWAY_DIR, 'src/server.ts'),
      cwd: REPO,
      port: 0,
      env,
      healthPath: '/health',
      timeoutMs: 60_000,
    });
    gatewayFront?.target(gateway.port);
  };

  beforeAll(async () => {
    gatewayFront = await startTcpFront();
    const gatewayUrl = gatewayFront.url;
    exchangeFront = await startTcpFront();
    exchangeUrl = exchangeFront.url;
    sink = await startSmtpSink();
    exchange = await buildApp({
      db: target.db(),
      reference,
      secretBox,
      paygate: { ...defaultPaygateConfig(), url: gatewayUrl, timeoutMs: 5_000, ...options.paygate },
      fiat: { pollMs: 200, resendAfterMs: 1_000 },
      mail: {
        mailer: createSmtpMailer({
          url: sink.url,
          user: undefined,
          password: undefined,
          from: 'exchange@example.com',
          requireTls: false,
          tlsRejectUnauthorized: true,
        }),
        publicUrl: exchangeUrl,
        linkTtlMs: 3_600_000,
      },
    });
    const address = await exchange.listen({ port: 0, host: '127.0.0.1' });
    exchangeFront.target(Number(new URL(address).port));
    configDir = mkdtempSync(path.join(tmpdir(), 'fiat-e2e-'));
    const yaml = readFileSync(path.join(GATEWAY_DIR, 'config/gateway.yaml'), 'utf8').replaceAll(
      'http://127.0.0.1:3100/v3/paygate/',
      `${exchangeUrl}/v3/paygate/`,
    );
    const configFile = path.join(configDir, 'gateway.yaml');
    writeFileSync(configFile, yaml);
    env = {
      PAYGATE_CONFIG: configFile,
      DATABASE_URL: gatewayDb.url,
      PUBLIC_URL: gatewayUrl,
      PAYOUT_SETTLE_MS: '300',
      WORKER_INTERVAL_MS: '50',
      CALLBACK_RETRY_BASE_MS: '100',
      CALLBACK_RETRY_MAX_MS: '1000',
      LOG_LEVEL: 'warn',
      ...(options.cardAttemptsMax === undefined
        ? {}
        : { CARD_ATTEMPTS_MAX: String(options.cardAttemptsMax) }),
      ...(await options.gatewayEnv?.(exchangeUrl)),
    };
    await startGateway();
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await exchange?.close();
    await gatewayFront?.close();
    await exchangeFront?.close();
    await sink?.close();
    if (configDir) rmSync(configDir, { recursive: true, force: true });
  });

  return {
    get exchange() {
      if (!exchange) throw new Error('not started');
      return exchange;
    },
    get exchangeUrl() {
      return exchangeUrl;
    },
    get mail() {
      return sink!;
    },
    get gatewayUrl() {
      if (!gatewayFront) throw new Error('not started');
      return gatewayFront.url;
    },
    get gateway() {
      return gateway!;
    },
    get db() {
      return target.db();
    },
    get gatewayDatabaseUrl() {
      return gatewayDb.url;
    },
    async undeliveredCallbacks() {
      const db = new pg.Client({ connectionString: gatewayDb.url });
      await db.connect();
      try {
        const { rows } = await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM callback_outbox WHERE delivered_at IS NULL',
        );
        return rows[0]?.n ?? 0;
      } finally {
        await db.end();
      }
    },
    async restartGateway() {
      gatewayFront?.target(undefined);
      await gateway?.stop();
      await startGateway();
    },
  };
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
