import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import type { Catalog } from '../../src/catalog/catalog.js';
import { buildCatalog } from '../../src/catalog/load.js';
import { DEFAULT_CATALOG_FILE } from '../../src/config.js';

export const SANDBOX_SECRET = 'sandbox-exchange-secret';

interface Doc {
  merchants: Record<string, { callback_url: string; return_url: string }>;
}

/** The bundled gateway file with the exchange merchant's URLs pointed elsewhere (a test receiver). */
export function bundledDocument(urls: { callbackUrl?: string; returnUrl?: string } = {}): unknown {
  const doc = parse(readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as Doc;
  const exchange = doc.merchants.exchange;
  if (!exchange) throw new Error('the bundled file has no exchange merchant');
  if (urls.callbackUrl) exchange.callback_url = urls.callbackUrl;
  if (urls.returnUrl) exchange.return_url = urls.returnUrl;
  return doc;
}

export function bundledYaml(urls: { callbackUrl?: string; returnUrl?: string } = {}): string {
  return stringify(bundledDocument(urls));
}

/** `self`: the gateway's own address, for merchant URLs given as paths (the try-it merchant's). */
export function testCatalog(
  urls: { callbackUrl?: string; returnUrl?: string } = {},
  self?: () => string,
): Catalog {
  return buildCatalog(bundledDocument(urls), new Map(), '<test>', undefined, self);
}
