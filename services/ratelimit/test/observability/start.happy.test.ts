import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startObservability } from '../../src/observability/start.js';
import { parseObservabilitySettings } from '../../src/settings/observability.js';
import { StatsRegistry } from '../../src/stats/registry.js';

describe('startObservability', () => {
  it('starts the stats loop, pull metrics and the debug server, and closes them', async () => {
    const out: string[] = [];
    const registry = new StatsRegistry();
    const running = await startObservability({
      settings: parseObservabilitySettings({
        USE_STATSD: 'false',
        USE_PULLMETRICS: 'true',
        PULLMETRICS_ADDR: '127.0.0.1:0',
        DEBUG_HOST: '127.0.0.1',
        DEBUG_PORT: '0',
      }),
      registry,
      rlconfigLines: () => ['rl.foo: unit=MINUTE requests_per_unit=1, shadow_mode: false, quota_mode: false'],
      writeStdout: (t) => out.push(t),
    });
    registry.counter('ratelimit.service.rate_limit.rl.foo.over_limit').add(2);
    const metrics = await (await fetch(`${running.pullMetrics?.url}/metrics`)).text();
    expect(metrics).toContain('ratelimit_service_rate_limit_over_limit{domain="rl",key1="foo"} 2');
    expect(await (await fetch(`${running.debug?.url}/rlconfig`)).text()).toBe(
      'rl.foo: unit=MINUTE requests_per_unit=1, shadow_mode: false, quota_mode: false\n',
    );
    await running.close();
    // closing flushes the stats one last time
    expect(out.join('')).toContain('ratelimit.service.rate_limit.rl.foo.over_limit:2|c');
    await expect(fetch(`${running.debug?.url}/`)).rejects.toThrow();
  });

  it('a busy debug port is logged, not fatal; a busy pull-metrics port stops the start-up', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const errors: string[] = [];
      const log = { info: () => {}, error: (_o: object, m: string) => errors.push(m) };
      const base = { USE_STATSD: 'false', DEBUG_HOST: '127.0.0.1', DEBUG_PORT: String(port) };
      const running = await startObservability({
        settings: parseObservabilitySettings(base),
        registry: new StatsRegistry(),
        rlconfigLines: () => [],
        log,
        writeStdout: () => {},
      });
      expect(running.debug).toBeUndefined();
      expect(errors).toEqual(['debug server not started']);
      await running.close();
      await expect(
        startObservability({
          settings: parseObservabilitySettings({
            ...base,
            DEBUG_PORT: '0',
            USE_PULLMETRICS: 'true',
            PULLMETRICS_ADDR: `127.0.0.1:${port}`,
          }),
          registry: new StatsRegistry(),
          rlconfigLines: () => [],
          writeStdout: () => {},
        }),
      ).rejects.toThrow(/^PULLMETRICS_ADDR: cannot listen: .*EADDRINUSE/);
    } finally {
      blocker.close();
    }
  });
});
