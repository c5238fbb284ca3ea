import { readFileSync } from 'node:fs';
import { defaultSecretRefusal, type Exposure } from '@platform/default-secrets/default-secrets';
import { Value } from 'typebox/value';
import { parse } from 'yaml';
import { feeRuleProblem } from '../domain/fees.js';
import type { FieldRule } from '../domain/fields.js';
import { parseAmount } from '../domain/money.js';
import { type CallbackFaults, faultsOn, parseCallbackFaults } from '../sandbox/faults.js';
import type { Catalog, Merchant, Method, Service } from './catalog.js';
import { GatewayFile } from './schema.js';

export class CatalogError extends Error {
  constructor(file: string, problem: string) {
    super(`gateway config ${file}: ${problem}`);
    this.name = 'CatalogError';
  }
}

/**
 * The environment variable of a merchant setting: `PAYGATE_MERCHANT_SECRET_<ID in upper case>`, and
 * `..._CALLBACK_URL_<ID>` / `..._RETURN_URL_<ID>` that override the file's URLs (tests and deployments
 * that move the merchant).
 */
export function merchantVariable(
  kind: 'SECRET' | 'CALLBACK_URL' | 'CALLBACK_FAULTS' | 'RETURN_URL' | 'WEBSITE' | 'ICON',
  merchantId: string,
): string {
  return `PAYGATE_MERCHANT_${kind}_${merchantId.toUpperCase()}`;
}

/**
 * A merchant URL of the file: an absolute http(s) URL, or a path on the gateway itself, read through
 * `self` at each use (the gateway's public address is known only once it listens, with PORT=0).
 */
function merchantUrl(value: string, where: string, file: string, self?: () => string): () => string {
  if (value.startsWith('/') && !value.startsWith('//')) {
    if (!self) throw new CatalogError(file, `${where} is a path, which needs the gateway's own address`);
    return () => `${self().replace(/\/+$/, '')}${value}`;
  }
  const url = httpUrl(value, where, file);
  return () => url;
}

function httpUrl(value: string, where: string, file: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CatalogError(file, `${where} is not a URL: "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CatalogError(file, `${where} must be an http(s) URL`);
  }
  return value;
}

/**
 * Validates a parsed gateway document and builds the catalog. `merchantEnv` maps environment
 * variable names (`PAYGATE_MERCHANT_SECRET_EXCHANGE`, ...) to values.
 */
export function buildCatalog(
  document: unknown,
  merchantEnv: ReadonlyMap<string, string>,
  file = '<inline>',
  exposure?: Exposure,
  /** The gateway's own public address, for merchant URLs given as paths. @default http://127.0.0.1:3200 */
  self: () => string = () => 'http://127.0.0.1:3200',
): Catalog {
  if (!Value.Check(GatewayFile, document)) {
    const first = Value.Errors(GatewayFile, document)[0];
    throw new CatalogError(file, `${first?.instancePath || '/'} ${first?.message ?? 'is invalid'}`);
  }
  const data = document;
  const precision = new Map(Object.entries(data.currencies).map(([code, c]) => [code, c.precision]));

  const merchants = new Map<string, Merchant>();
  const keys = new Map<string, { merchant: Merchant; currency: string }>();
  for (const [id, m] of Object.entries(data.merchants)) {
    const variable = merchantVariable('SECRET', id);
    const fromEnv = merchantEnv.get(variable);
    const secret = fromEnv ?? m.sandbox_secret;
    if (!secret)
      throw new CatalogError(file, `merchant ${id}: set ${variable} (no sandbox_secret in the file)`);
    if (!m.test_mode && (fromEnv === undefined || fromEnv === m.sandbox_secret || fromEnv.length < 16)) {
      throw new CatalogError(
        file,
        `merchant ${id} is live (test_mode: false): ${variable} must be set to a secret of 16+ characters other than the sandbox one`,
      );
    }
    // The sandbox secret is in this repository: anyone could sign callbacks, payouts and forms with it.
    const sandbox = secret === m.sandbox_secret || KNOWN_SANDBOX_SECRETS.has(secret);
    const refusal =
      sandbox && exposure
        ? defaultSecretRefusal({ setting: variable, what: `merchant ${id}'s sandbox secret` }, exposure)
        : undefined;
    // A try-it merchant is simply left out where its public secret may not serve.
    if (refusal && m.sandbox_only) continue;
    if (refusal) throw new CatalogError(file, refusal);
    // The prerequest's `account`: the file's values, or the merchant's public address from the
    // environment (the file's defaults point at a local exchange, 127.0.0.1:3100).
    const websiteVariable = merchantVariable('WEBSITE', id);
    const iconVariable = merchantVariable('ICON', id);
    const websiteFromEnv = merchantEnv.get(websiteVariable);
    const website = websiteFromEnv === undefined ? m.website : httpUrl(websiteFromEnv, websiteVariable, file);
    const iconFromEnv = merchantEnv.get(iconVariable);
    const icon =
      iconFromEnv !== undefined
        ? httpUrl(iconFromEnv, iconVariable, file)
        : websiteFromEnv !== undefined && m.website !== '' && m.icon.startsWith(m.website)
          ? // The file's icon lives on the file's website: it moves with it.
            `${website.replace(/\/+$/, '')}${m.icon.slice(m.website.replace(/\/+$/, '').length)}`
          : m.icon;
    const faultsVariable = merchantVariable('CALLBACK_FAULTS', id);
    const callbackFaults = faultsOf(merchantEnv.get(faultsVariable) ?? m.callback_faults, {
      merchant: id,
      testMode: m.test_mode,
      setting: merchantEnv.has(faultsVariable) ? faultsVariable : `merchant ${id} callback_faults`,
      file,
    });
    const callbackUrl = merchantUrl(
      merchantEnv.get(merchantVariable('CALLBACK_URL', id)) ?? m.callback_url,
      `merchant ${id} callback_url`,
      file,
      self,
    );
    const returnUrl = merchantUrl(
      merchantEnv.get(merchantVariable('RETURN_URL', id)) ?? m.return_url,
      `merchant ${id} return_url`,
      file,
      self,
    );
    const merchant: Merchant = {
      id,
      name: m.name,
      description: m.description,
      icon,
      website,
      testMode: m.test_mode,
      publicKeys: new Map(Object.entries(m.public_keys)),
      get callbackUrl() {
        return callbackUrl();
      },
      get returnUrl() {
        return returnUrl();
      },
      secret,
      ...(callbackFaults ? { callbackFaults } : {}),
    };
    for (const [currency, key] of merchant.publicKeys) {
      if (!precision.has(currency))
        throw new CatalogError(file, `merchant ${id}: unknown currency ${currency}`);
      if (keys.has(key)) throw new CatalogError(file, `public key ${key} is used twice`);
      keys.set(key, { merchant, currency });
    }
    merchants.set(id, merchant);
  }

  const methods = new Map<string, Method>();
  for (const [code, m] of Object.entries(data.methods)) {
    methods.set(code, { code, ...m });
  }

  const services = new Map<string, Service>();
  for (const [code, s] of Object.entries(data.services)) {
    const where = `service ${code}`;
    const decimals = precision.get(s.currency);
    if (decimals === undefined) throw new CatalogError(file, `${where}: unknown currency ${s.currency}`);
    if (!methods.has(s.method)) throw new CatalogError(file, `${where}: unknown method ${s.method}`);
    const min = parseAmount(String(s.amount_min), decimals);
    const max = parseAmount(String(s.amount_max), decimals);
    if (!min.ok)
      throw new CatalogError(file, `${where}: amount_min must be a positive amount (${min.reason})`);
    if (!max.ok)
      throw new CatalogError(file, `${where}: amount_max must be a positive amount (${max.reason})`);
    if (min.minor > max.minor)
      throw new CatalogError(file, `${where}: amount_min is greater than amount_max`);
    const fee = {
      rate: String(s.fee.rate),
      fixed: String(s.fee.fixed),
      min: String(s.fee.min),
      max: String(s.fee.max),
    };
    const feeProblem = feeRuleProblem(fee, decimals);
    if (feeProblem) throw new CatalogError(file, `${where}: fee ${feeProblem}`);
    const seen = new Set<string>();
    const fields: FieldRule[] = [];
    for (const f of s.fields) {
      if (seen.has(f.key)) throw new CatalogError(file, `${where}: field ${f.key} is listed twice`);
      seen.add(f.key);
      try {
        new RegExp(f.regexp);
      } catch {
        throw new CatalogError(file, `${where}: field ${f.key} has an invalid regexp`);
      }
      fields.push({ ...f });
    }
    fields.sort((a, b) => a.position - b.position);
    services.set(code, {
      code,
      method: s.method,
      currency: s.currency,
      flow: s.flow,
      fields,
      amountMin: String(s.amount_min),
      amountMax: String(s.amount_max),
      limits: { min: min.minor, max: max.minor },
      fee,
    });
  }

  for (const [key, field] of Object.entries(data.page_fields)) {
    if (!field.label.en || !field.hint.en)
      throw new CatalogError(file, `page_fields.${key}: label and hint need an "en" text`);
  }

  return {
    pageFields: data.page_fields,
    merchants,
    methods,
    services,
    precision,
    byPublicKey: (key) => keys.get(key),
    servicesFor(currency, flow) {
      return [...services.values()]
        .filter((s) => s.currency === currency && s.flow === flow)
        .sort((a, b) => (methods.get(a.method)?.position ?? 0) - (methods.get(b.method)?.position ?? 0));
    },
  };
}

/**
 * A merchant's callback faults, or undefined when off; refused for a live merchant (test_mode: false),
 * whose real receiver must never be sent a duplicate or a callback signed with a retired secret on purpose.
 */
function faultsOf(
  text: string | undefined,
  where: { merchant: string; testMode: boolean; setting: string; file: string },
): CallbackFaults | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const parsed = parseCallbackFaults(text);
  if (!parsed.ok) throw new CatalogError(where.file, `${where.setting}: ${parsed.problem}`);
  if (!faultsOn(parsed.faults)) return undefined;
  if (!where.testMode) {
    throw new CatalogError(
      where.file,
      `${where.setting}: callback faults are for test merchants only, and merchant ${where.merchant} is live (test_mode: false)`,
    );
  }
  return parsed.faults;
}

/** Secrets published in this repository, refused like a `sandbox_secret` wherever they come from. */
const KNOWN_SANDBOX_SECRETS = new Set(['sandbox-exchange-secret', 'sandbox-try-it-secret']);

/**
 * Reads and validates the gateway configuration file; throws CatalogError naming the problem. With
 * `exposure` (the server's), a merchant on its sandbox secret is refused off loopback or with a database.
 */
export function loadCatalog(
  file: string,
  merchantEnv: ReadonlyMap<string, string>,
  exposure?: Exposure,
  self?: () => string,
): Catalog {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new CatalogError(file, `cannot read it (${(error as Error).message})`);
  }
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new CatalogError(file, `is not valid YAML (${(error as Error).message})`);
  }
  return buildCatalog(document, merchantEnv, file, exposure, self);
}
