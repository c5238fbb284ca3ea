import type { SupervisedService } from './supervisor.js';

/** Renders the one summary table the launcher prints once every service has started or failed. */
export function renderTable(
  services: readonly SupervisedService[],
  extraLines: readonly string[] = [],
): string {
  const rows: [string, string, string][] = [['service', 'status', 'where']];
  for (const service of services) {
    const entries = Object.entries(service.spec.urls);
    const status =
      service.state === 'failed'
        ? `FAILED: ${service.failure}`
        : service.state === 'slow'
          ? `still starting: ${service.failure}; waiting on`
          : service.state;
    if (entries.length === 0) rows.push([service.spec.name, status, service.spec.health]);
    entries.forEach(([label, url], i) => {
      rows.push([i === 0 ? service.spec.name : '', i === 0 ? status : '', `${label}: ${url}`]);
    });
  }
  const widths = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: [string, string, string]) =>
    r
      .map((cell, c) => cell.padEnd(widths[c]!))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(rows[0]!), rule, ...rows.slice(1).map(line), ...extraLines].join('\n');
}
