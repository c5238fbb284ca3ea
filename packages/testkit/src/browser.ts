import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { MissingBinaryError } from './binaries.js';

/** Debian's chromium; `.ci/run` installs the `chromium` package. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

// Headless, no sandbox (tests may run as root), and nothing that phones home or updates itself.
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  /** A browser context of its own (a fresh profile directory). */
  readonly context: BrowserContext;
  /** Closes the browser and deletes its profile directory. */
  close(): Promise<void>;
}

export interface LaunchOptions {
  /** @default CHROMIUM_PATH (`/usr/bin/chromium`, or the CHROMIUM_PATH variable) */
  readonly executablePath?: string;
  /** @default true */
  readonly javaScriptEnabled?: boolean;
  /** Lets test code inject scripts (axe-core) into pages whose Content-Security-Policy forbids it. @default false */
  readonly bypassCSP?: boolean;
  /** @default { width: 1000, height: 900 } */
  readonly viewport?: { width: number; height: number };
}

/**
 * Starts Debian's chromium through playwright-core with a fresh profile (`--user-data-dir`, given to
 * Playwright as the persistent context's directory). A missing chromium fails naming the package.
 */
export async function launchBrowser(options: LaunchOptions = {}): Promise<TestBrowser> {
  const executablePath = options.executablePath ?? CHROMIUM_PATH;
  if (!existsSync(executablePath)) throw new MissingBinaryError('chromium', 'chromium');
  const profile = await mkdtemp(join(tmpdir(), 'testkit-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: ARGS,
      javaScriptEnabled: options.javaScriptEnabled ?? true,
      bypassCSP: options.bypassCSP ?? false,
      viewport: options.viewport ?? { width: 1000, height: 900 },
      timeout: 60_000,
    });
    return {
      context,
      async close() {
        await context.close().catch(() => {});
        await rm(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
}
