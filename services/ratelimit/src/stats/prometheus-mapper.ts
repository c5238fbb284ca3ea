import { parse } from 'yaml';

/**
 * Maps statsd-style names to Prometheus metric names and labels with the mapping file format of the
 * Prometheus statsd exporter (https://github.com/prometheus/statsd_exporter#metric-mapping-and-configuration):
 * `mappings: [{match, match_type: glob|regex, name, labels, action: map|drop, match_metric_type}]`
 * and `defaults: {match_type}`. In a glob, `*` matches one dot-free part; `$1`/`${1}` in `name` and
 * label values refer to the matched parts (glob) or groups (regex). The first matching rule wins;
 * a name no rule matches keeps its statsd name with every invalid character turned into `_`.
 */
export type StatType = 'counter' | 'gauge' | 'observer';

export interface MappedMetric {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

interface Rule {
  readonly regex: RegExp;
  readonly name: string;
  readonly labels: readonly (readonly [string, string])[];
  readonly drop: boolean;
  readonly metricType: StatType | undefined;
}

export class MappingError extends Error {
  constructor(message: string) {
    super(`metric mapping: ${message}`);
    this.name = 'MappingError';
  }
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function globToRegex(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('([^.]+)');
  return new RegExp(`^${body}$`);
}

function expand(template: string, groups: RegExpExecArray): string {
  return template.replace(
    /\$(?:\{(\d+)\}|(\d+))/g,
    (_, braced: string | undefined, bare: string | undefined) => {
      return groups[Number(braced ?? bare)] ?? '';
    },
  );
}

/** The statsd exporter's escaping of a name that no rule maps. */
export function escapeMetricName(name: string): string {
  const escaped = name.replace(/[^a-zA-Z0-9_:]/g, '_');
  return /^[0-9]/.test(escaped) ? `_${escaped}` : escaped;
}

function metricTypeOf(value: unknown, where: string): StatType | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (value === 'counter' || value === 'gauge') return value;
  if (value === 'observer' || value === 'timer' || value === 'histogram' || value === 'distribution')
    return 'observer';
  throw new MappingError(`${where}: unknown match_metric_type '${String(value)}'`);
}

export class MetricMapper {
  private readonly cache = new Map<string, MappedMetric | null>();
  private constructor(private readonly rules: readonly Rule[]) {}

  /** Parses a mapping document; throws `MappingError` naming the faulty rule. */
  static fromYaml(text: string): MetricMapper {
    let doc: unknown;
    try {
      doc = parse(text);
    } catch (error) {
      throw new MappingError(`invalid YAML: ${(error as Error).message}`);
    }
    if (typeof doc !== 'object' || doc === null)
      throw new MappingError('the document must be a map with "mappings"');
    const { mappings, defaults } = doc as { mappings?: unknown; defaults?: { match_type?: unknown } };
    const defaultType = defaults?.match_type ?? 'glob';
    if (!Array.isArray(mappings)) throw new MappingError('"mappings" must be a list');
    const rules = mappings.map((raw: unknown, i): Rule => {
      const where = `mappings[${i}]`;
      if (typeof raw !== 'object' || raw === null) throw new MappingError(`${where} must be a map`);
      const m = raw as Record<string, unknown>;
      if (typeof m.match !== 'string' || m.match === '')
        throw new MappingError(`${where}: "match" is required`);
      const matchType = m.match_type ?? defaultType;
      let regex: RegExp;
      if (matchType === 'glob') regex = globToRegex(m.match);
      else if (matchType === 'regex') {
        try {
          regex = new RegExp(m.match);
        } catch (error) {
          throw new MappingError(`${where}: invalid regex: ${(error as Error).message}`);
        }
      } else throw new MappingError(`${where}: unknown match_type '${String(matchType)}'`);
      const drop = m.action === 'drop';
      if (!drop && (m.action ?? 'map') !== 'map')
        throw new MappingError(`${where}: unknown action '${String(m.action)}'`);
      if (!drop && (typeof m.name !== 'string' || m.name === ''))
        throw new MappingError(`${where}: "name" is required`);
      const labels = Object.entries((m.labels ?? {}) as Record<string, unknown>).map(
        ([k, v]): [string, string] => {
          if (!LABEL_NAME.test(k)) throw new MappingError(`${where}: invalid label name '${k}'`);
          return [k, String(v)];
        },
      );
      return {
        regex,
        name: String(m.name ?? ''),
        labels,
        drop,
        metricType: metricTypeOf(m.match_metric_type, where),
      };
    });
    return new MetricMapper(rules);
  }

  /** The Prometheus name and labels of a statsd name, or null when a rule drops it. */
  map(statName: string, type: StatType): MappedMetric | null {
    const key = `${type}\u0000${statName}`;
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    let result: MappedMetric | null = { name: escapeMetricName(statName), labels: {} };
    for (const rule of this.rules) {
      if (rule.metricType !== undefined && rule.metricType !== type) continue;
      const groups = rule.regex.exec(statName);
      if (!groups) continue;
      if (rule.drop) result = null;
      else {
        const name = expand(rule.name, groups);
        result = {
          name: METRIC_NAME.test(name) ? name : escapeMetricName(name),
          labels: Object.fromEntries(rule.labels.map(([k, v]) => [k, expand(v, groups)])),
        };
      }
      break;
    }
    this.cache.set(key, result);
    return result;
  }
}
