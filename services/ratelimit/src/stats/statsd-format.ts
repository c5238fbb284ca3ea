import type { Mogrifier } from '../settings/observability.js';

/**
 * Turns statistics into statsd lines. Plain statsd carries tags inside the name as the reference's
 * stats library does (`name.__key=value`, tags sorted by key); the extended output (`USE_EXT_STATSD`)
 * uses DogStatsD tags (`name:1|c|#key:value`) after rewriting names with the mogrifiers.
 */
export type StatKind = 'c' | 'g' | 'ms';

export interface StatsdFormat {
  readonly extended: boolean;
  readonly extraTags: readonly (readonly [string, string])[];
  readonly mogrifiers: readonly Mogrifier[];
}

export interface MogrifiedName {
  name: string;
  tags: [string, string][];
}

function expand(template: string, groups: RegExpExecArray): string {
  return template.replace(/\$(\d+)/g, (_, n: string) => groups[Number(n)] ?? '');
}

/**
 * Applies the mogrifiers in the order listed in `EXT_STATSD_MOGRIFIERS`; each one that matches
 * rewrites the name (the next sees the new name) and adds its tags.
 */
export function mogrify(name: string, mogrifiers: readonly Mogrifier[]): MogrifiedName {
  let current = name;
  const tags: [string, string][] = [];
  for (const m of mogrifiers) {
    const groups = m.pattern.exec(current);
    if (!groups) continue;
    const next = expand(m.newName, groups);
    for (const [k, v] of m.tags) tags.push([expand(k, groups), expand(v, groups)]);
    current = next;
  }
  return { name: current, tags };
}

/** statsd forbids ':', '|' and '@' in names and '#', ',' in DogStatsD tags. */
function clean(text: string): string {
  return text.replace(/[:|@#,\n]/g, '_');
}

export function formatStat(name: string, value: number, kind: StatKind, format: StatsdFormat): string {
  const rendered = Number.isInteger(value) ? String(value) : value.toFixed(3);
  if (format.extended) {
    const m = mogrify(name, format.mogrifiers);
    const tags = [...format.extraTags, ...m.tags];
    const suffix = tags.length > 0 ? `|#${tags.map(([k, v]) => `${clean(k)}:${clean(v)}`).join(',')}` : '';
    return `${clean(m.name)}:${rendered}|${kind}${suffix}`;
  }
  const tags = [...format.extraTags].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const tagged = tags.map(([k, v]) => `.__${k}=${v}`).join('');
  return `${clean(name + tagged)}:${rendered}|${kind}`;
}
