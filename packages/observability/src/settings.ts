/**
 * `METRICS_HOST` and `METRICS_PORT`, with one meaning in every service. Each service's `config.ts`
 * calls `parseMetricsSettings` with its environment and its default port; a wrong value stops the
 * start naming the setting (the service passes its own config error's constructor).
 */
export interface MetricsSettings {
  /** `METRICS_HOST` @default "127.0.0.1": the metrics listener is for the operator's scraper, not the public */
  readonly host: string;
  /**
   * `METRICS_PORT`; `0` lets the system pick a free port (the start log line says which); `off`
   * disables the listener (process and service metrics are still counted, nobody can read them).
   * @default per service (exchange 9100, paygate 9200, events 9300, blog-graphql 9400, graphql-proxy 9501)
   */
  readonly port: number | 'off';
}

export function parseMetricsSettings(
  env: Readonly<Record<string, string | undefined>>,
  defaultPort: number,
  fail: (setting: 'METRICS_PORT', detail: string) => Error = (setting, detail) =>
    new Error(`${setting}: ${detail}`),
): MetricsSettings {
  const host = env.METRICS_HOST?.trim() || '127.0.0.1';
  const raw = env.METRICS_PORT?.trim();
  if (raw === undefined || raw === '') return { host, port: defaultPort };
  if (raw === 'off') return { host, port: 'off' };
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) {
    throw fail('METRICS_PORT', `expected a port number from 0 to 65535 or "off", got "${raw}"`);
  }
  return { host, port: Number(raw) };
}
