import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { listen, type RunningHttpServer } from '../observability/http-listen.js';
import type { PullMetricsSettings } from '../settings/observability.js';
import { DEFAULT_MAPPING_YAML } from './default-mapping.js';
import { MetricMapper, type StatType } from './prometheus-mapper.js';
import type { StatsRegistry } from './registry.js';

/**
 * The pull-metrics endpoint (`USE_PULLMETRICS`): the registry rendered in the Prometheus text
 * exposition format 0.0.4 on every scrape. Counters are running totals; timers become summaries
 * (`_sum` in seconds and `_count`, as the statsd exporter converts milliseconds).
 */
interface Sample {
  labels: Record<string, string>;
  value: number;
  count?: number;
}

interface Family {
  type: 'counter' | 'gauge' | 'summary';
  samples: Map<string, Sample>;
}

function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labelText(labels: Record<string, string>, extra = ''): string {
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${escapeLabelValue(labels[k] as string)}"`);
  if (extra) parts.push(extra);
  return parts.length > 0 ? `{${parts.join(',')}}` : '';
}

function formatValue(n: number): string {
  return Number.isFinite(n) ? String(n) : n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
}

/**
 * `timerUnitMs`: milliseconds per observed unit of timers (1000: seconds, the default mapping's
 * `_seconds`; 1: milliseconds, PULLMETRICS_RESPONSE_TIME_AS_MILLISECONDS).
 */
export function renderPrometheus(registry: StatsRegistry, mapper: MetricMapper, timerUnitMs = 1000): string {
  const families = new Map<string, Family>();
  const snapshot = registry.snapshot();
  const add = (statName: string, statType: StatType, value: number, count?: number): void => {
    const mapped = mapper.map(statName, statType);
    if (!mapped) return;
    const type = statType === 'observer' ? 'summary' : statType;
    let family = families.get(mapped.name);
    if (!family) {
      family = { type, samples: new Map() };
      families.set(mapped.name, family);
    }
    // Two statsd names of different kinds mapped to one Prometheus name: the first kind wins.
    if (family.type !== type) return;
    const key = labelText(mapped.labels);
    const existing = family.samples.get(key);
    if (existing && type !== 'gauge') {
      existing.value += value;
      existing.count = (existing.count ?? 0) + (count ?? 0);
    } else family.samples.set(key, { labels: { ...mapped.labels }, value, count });
  };
  for (const [name, v] of snapshot.counters) add(name, 'counter', v);
  for (const [name, v] of snapshot.gauges) add(name, 'gauge', v);
  for (const [name, t] of snapshot.timers) add(name, 'observer', t.sumMs / timerUnitMs, t.count);

  const lines: string[] = [];
  for (const name of [...families.keys()].sort()) {
    const family = families.get(name) as Family;
    lines.push(`# TYPE ${name} ${family.type}`);
    for (const sample of family.samples.values()) {
      if (family.type === 'summary') {
        lines.push(`${name}_sum${labelText(sample.labels)} ${formatValue(sample.value)}`);
        lines.push(`${name}_count${labelText(sample.labels)} ${sample.count ?? 0}`);
      } else lines.push(`${name}${labelText(sample.labels)} ${formatValue(sample.value)}`);
    }
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

/** The mapper of the settings: the file of `PULLMETRICS_MAPPER_YAML` when set, else the default. */
export async function loadMapper(
  settings: Pick<PullMetricsSettings, 'mapperYamlPath'>,
): Promise<MetricMapper> {
  if (settings.mapperYamlPath === undefined) return MetricMapper.fromYaml(DEFAULT_MAPPING_YAML);
  let text: string;
  try {
    text = await readFile(settings.mapperYamlPath, 'utf8');
  } catch (error) {
    throw new Error(
      `PULLMETRICS_MAPPER_YAML: cannot read ${settings.mapperYamlPath}: ${(error as Error).message}`,
    );
  }
  try {
    return MetricMapper.fromYaml(text);
  } catch (error) {
    throw new Error(`PULLMETRICS_MAPPER_YAML: ${settings.mapperYamlPath}: ${(error as Error).message}`);
  }
}

export async function startPullMetricsServer(
  settings: PullMetricsSettings,
  registry: StatsRegistry,
): Promise<RunningHttpServer> {
  const mapper = await loadMapper(settings);
  // As the reference, the option only drops the default mapping's scaling to seconds.
  const timerUnitMs = settings.responseTimeAsMilliseconds && settings.mapperYamlPath === undefined ? 1 : 1000;
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== settings.path || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found\n');
      return;
    }
    const body = renderPrometheus(registry, mapper, timerUnitMs);
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  return listen(server, settings.port, settings.host);
}
