/** Shared fixtures of the HTTP tests: a real listener, stores on both databases, tokens signed here. */
import { listenOnFreePort, type RunningApp } from '@platform/testkit/app';
import type { FastifyBaseLogger } from 'fastify';
import { SignJWT } from 'jose';
import { buildApp, type FeaturesOptions } from '../src/app.js';
import { createTokenVerifier, type VerifierKey } from '../src/auth/token-verifier.js';
import { type FeatureSettings, loadConfig, type StorageConfig } from '../src/config.js';
import { createEventStore, type EventStore } from '../src/storage/event-store.js';
import { migrate } from '../src/storage/migrations.js';
import { type OpenedStorage, openEventStore, openStorage } from '../src/storage/open-store.js';
import { createPgClient } from '../src/storage/pg-client.js';
import { createPgliteClient } from '../src/storage/pglite-client.js';

export const SECRET = 'a-test-secret-that-is-at-least-32-bytes-long';

export async function openPgliteStore(): Promise<EventStore> {
  const client = await createPgliteClient(undefined);
  await migrate(client);
  return createEventStore(client);
}

/** PGlite in memory, migrated, with its client (for the sync, calendar and webhook routes). */
export async function openPgliteStorage(): Promise<OpenedStorage> {
  const client = await createPgliteClient(undefined);
  await migrate(client);
  return { store: createEventStore(client), sql: client };
}

/** The production wiring with the client: migrations, the read cache and its feed on PostgreSQL. */
export function openProductionStorage(storage: StorageConfig): Promise<OpenedStorage> {
  return openStorage(storage, { cacheMaxEntries: 1_000 });
}

/** The settings of sync, calendars and webhooks as `env` gives them (defaults for the rest). */
export function featureSettings(env: Record<string, string> = {}): FeatureSettings {
  return loadConfig(env).features;
}

/** The production wiring: migrations plus the read cache (with the NOTIFY feed on PostgreSQL). */
export function openProductionStore(storage: StorageConfig): Promise<EventStore> {
  return openEventStore(storage, { cacheMaxEntries: 1_000 });
}

export async function openPostgresStore(url: string): Promise<EventStore> {
  const client = createPgClient({ url, poolMax: 4 });
  await migrate(client);
  return createEventStore(client);
}

export interface TokenOptions {
  secret?: string;
  member?: boolean;
  /** Seconds from now; negative for an expired token. */
  expiresIn?: number;
  issuer?: string;
  audience?: string;
  /** @default 'HS256' */
  alg?: 'HS256' | 'HS384' | 'HS512';
}

export async function hmacToken(sub: string, options: TokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  let jwt = new SignJWT(options.member ? { member: true } : {})
    .setProtectedHeader({ alg: options.alg ?? 'HS256' })
    .setSubject(sub)
    .setIssuedAt(now - 60)
    .setExpirationTime(now + (options.expiresIn ?? 600));
  if (options.issuer !== undefined) jwt = jwt.setIssuer(options.issuer);
  if (options.audience !== undefined) jwt = jwt.setAudience(options.audience);
  return jwt.sign(new TextEncoder().encode(options.secret ?? SECRET));
}

export interface TestApp extends RunningApp {
  store: EventStore;
}

export interface StartOptions {
  store: EventStore;
  key?: VerifierKey;
  issuer?: string;
  audience?: string;
  clockToleranceSeconds?: number;
  basePath?: string;
  bodyLimitBytes?: number;
  /** `CORS_ORIGIN` @default '*' */
  corsOrigin?: '*' | readonly string[];
  /** `JWT_REQUIRE_EXP` @default true */
  requireExp?: boolean;
  logger?: FastifyBaseLogger;
  /** Sync, calendar feeds and webhooks; omitted: the event routes only. */
  features?: FeaturesOptions;
  now?: () => Date;
}

/** Builds the app on `store` and listens on a free port; closing it leaves the store open. */
export async function startApp(options: StartOptions): Promise<TestApp> {
  const app = await buildApp({
    store: options.store,
    verifier: createTokenVerifier({
      key: options.key ?? { kind: 'hmac', secret: SECRET },
      issuer: options.issuer,
      audience: options.audience,
      clockToleranceSeconds: options.clockToleranceSeconds ?? 0,
      memberClaim: 'member',
      requireExp: options.requireExp ?? true,
    }),
    corsOrigin: options.corsOrigin ?? '*',
    basePath: options.basePath ?? '',
    bodyLimitBytes: options.bodyLimitBytes ?? 512 * 1024,
    storageLabel: 'test',
    logger: options.logger,
    closeStore: false,
    ...(options.features ? { features: options.features } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  const running = await listenOnFreePort(app);
  return { ...running, store: options.store };
}

let counter = 0;
/** A fresh event id per call, so tests never depend on each other's rows. */
export function newId(prefix = 'ev'): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${counter}`;
}

export const validBody = {
  name: 'Spring meetup',
  body: '# Agenda\n\n- talks\n- pizza',
  cover: 'https://example.com/cover.png',
  date: '2026-05-01T18:30:00+02:00',
};

export interface CallOptions {
  method?: string;
  token?: string;
  body?: unknown;
  rawBody?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export async function call(
  app: RunningApp,
  path: string,
  options: CallOptions = {},
): Promise<{ status: number; headers: Headers; json: unknown; text: string }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
  const response = await fetch(`${app.url}${path}`, { method: options.method ?? 'GET', headers, body });
  const text = await response.text();
  let json: unknown;
  try {
    json = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, json, text };
}
