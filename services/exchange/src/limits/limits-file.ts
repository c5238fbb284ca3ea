import { parse } from 'yaml';
import {
  type LimitRule,
  type LimitsConfig,
  type RouteClass,
  type Subject,
  UNIT_SECONDS,
  type Unit,
} from './rules.js';

/**
 * Parses and validates the text of a limits file (format in the README, section Request limits).
 * Pure: the caller reads the file and turns an error into a ConfigError naming `RATE_LIMITS_FILE`.
 */
export type LimitsParse = { ok: true; config: LimitsConfig } | { ok: false; error: string };

const TOP_KEYS = new Set(['domain', 'rules', 'exempt']);
const RULE_KEYS = new Set(['name', 'routes', 'per', 'unit', 'requests_per_unit']);
const UINT32_MAX = 4_294_967_295;
/** Safe as a services/ratelimit descriptor value and a cache-key part (no `_`-splitting surprises needed). */
const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unknownKey(value: Record<string, unknown>, allowed: Set<string>): string | undefined {
  return Object.keys(value).find((key) => !allowed.has(key));
}

function parseRule(raw: unknown, index: number): LimitRule | string {
  const where = `rules[${index}]`;
  if (!isRecord(raw)) return `${where}: expected a map`;
  const extra = unknownKey(raw, RULE_KEYS);
  if (extra) return `${where}: unknown key '${extra}'`;
  const { name, routes, per, unit, requests_per_unit: perUnit } = raw;
  if (typeof name !== 'string' || !NAME.test(name)) {
    return `${where}: name must be 1-63 lower-case letters, digits or '-'`;
  }
  if (routes !== 'public' && routes !== 'private')
    return `${where} (${name}): routes must be public or private`;
  if (per !== 'address' && per !== 'key') return `${where} (${name}): per must be address or key`;
  if (per === 'key' && routes === 'public') {
    return `${where} (${name}): per: key needs routes: private (public routes carry no API key)`;
  }
  const unitName = typeof unit === 'string' ? unit.toLowerCase() : '';
  if (!Object.hasOwn(UNIT_SECONDS, unitName)) {
    return `${where} (${name}): unit must be second, minute, hour or day`;
  }
  if (typeof perUnit !== 'number' || !Number.isInteger(perUnit) || perUnit < 1 || perUnit > UINT32_MAX) {
    return `${where} (${name}): requests_per_unit must be an integer from 1 to ${UINT32_MAX}`;
  }
  return Object.freeze({
    name,
    routes: routes as RouteClass,
    per: per as Subject,
    unit: unitName as Unit,
    requestsPerUnit: perUnit,
  });
}

export function parseLimits(text: string): LimitsParse {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (error) {
    return { ok: false, error: `not valid YAML: ${(error as Error).message.split('\n')[0]}` };
  }
  if (!isRecord(raw)) return { ok: false, error: 'expected a map with domain, rules and exempt' };
  const extra = unknownKey(raw, TOP_KEYS);
  if (extra) return { ok: false, error: `unknown key '${extra}'` };
  const domain = raw.domain ?? 'exchange';
  if (typeof domain !== 'string' || !NAME.test(domain)) {
    return { ok: false, error: "domain must be 1-63 lower-case letters, digits or '-'" };
  }
  const rawRules = raw.rules ?? [];
  if (!Array.isArray(rawRules)) return { ok: false, error: 'rules must be a list' };
  const rules: LimitRule[] = [];
  for (const [index, item] of rawRules.entries()) {
    const rule = parseRule(item, index);
    if (typeof rule === 'string') return { ok: false, error: rule };
    if (rules.some((r) => r.name === rule.name)) {
      return { ok: false, error: `rules[${index}]: duplicate name '${rule.name}'` };
    }
    rules.push(rule);
  }
  const exempt = raw.exempt ?? [];
  if (
    !Array.isArray(exempt) ||
    !exempt.every((p): p is string => typeof p === 'string' && p.startsWith('/'))
  ) {
    return { ok: false, error: "exempt must be a list of route URLs starting with '/'" };
  }
  return {
    ok: true,
    config: Object.freeze({ domain, rules: Object.freeze(rules), exempt: Object.freeze([...exempt]) }),
  };
}
