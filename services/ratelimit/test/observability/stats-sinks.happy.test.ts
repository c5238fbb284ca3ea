import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { parseObservabilitySettings } from '../../src/settings/observability.js';
import { StatsRegistry } from '../../src/stats/registry.js';
import { type RunningStats, startStatsSinks } from '../../src/stats/sinks.js';

/** A real statsd-like UDP listener collecting every received line. */
async function udpListener(): Promise<{
  socket: Socket;
  port: number;
  lines: string[];
  waitFor(n: number): Promise<string[]>;
}> {
  const socket = createSocket('udp4');
  const lines: string[] = [];
  let waiters: (() => void)[] = [];
  socket.on('message', (msg) => {
    lines.push(...msg.toString('utf8').split('\n'));
    for (const w of waiters) w();
    waiters = [];
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const port = socket.address().port;
  return {
    socket,
    port,
    lines,
    async waitFor(n) {
      while (lines.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
      return lines;
    },
  };
}

let running: RunningStats | undefined;
let listener: Socket | undefined;
afterEach(async () => {
  await running?.close();
  listener?.close();
  running = undefined;
  listener = undefined;
});

describe('statsd sink over UDP', () => {
  it('sends counters as deltas since the last flush, gauges and timers in ms, with EXTRA_TAGS in the name', async () => {
    const udp = await udpListener();
    listener = udp.socket;
    const settings = parseObservabilitySettings({
      STATSD_HOST: '127.0.0.1',
      STATSD_PORT: String(udp.port),
      STATS_FLUSH_INTERVAL: '1h',
      EXTRA_TAGS: 'zone:eu,app:rl',
    });
    const registry = new StatsRegistry();
    running = startStatsSinks(settings.stats, registry);
    registry.counter('ratelimit.service.rate_limit.d.k_v.over_limit').add(3);
    registry.gauge('ratelimit.service.cache_size').set(7);
    registry.timer('ratelimit_server.ShouldRateLimit.response_time').record(12);
    running.flusher?.flush();
    const first = await udp.waitFor(3);
    expect(first).toEqual(
      expect.arrayContaining([
        'ratelimit.service.rate_limit.d.k_v.over_limit.__app=rl.__zone=eu:3|c',
        'ratelimit.service.cache_size.__app=rl.__zone=eu:7|g',
        'ratelimit_server.ShouldRateLimit.response_time.__app=rl.__zone=eu:12|ms',
      ]),
    );
    registry.counter('ratelimit.service.rate_limit.d.k_v.over_limit').add(2);
    running.flusher?.flush();
    const all = await udp.waitFor(5);
    // second flush: the counter delta (2, not 5) and the gauge; no timer (nothing recorded since)
    expect(all.slice(3)).toEqual([
      'ratelimit.service.rate_limit.d.k_v.over_limit.__app=rl.__zone=eu:2|c',
      'ratelimit.service.cache_size.__app=rl.__zone=eu:7|g',
    ]);
  });

  it('extended statsd: DogStatsD tags and mogrifiers with $n group references', async () => {
    const udp = await udpListener();
    listener = udp.socket;
    const settings = parseObservabilitySettings({
      STATSD_HOST: '127.0.0.1',
      STATSD_PORT: String(udp.port),
      USE_EXT_STATSD: 'true',
      EXTRA_TAGS: 'env:prod',
      EXT_STATSD_MOGRIFIERS: 'RL,SERVER',
      EXT_STATSD_MOGRIFIERS_RL_PATTERN: '^ratelimit\\.service\\.rate_limit\\.([^.]+)\\.(.*)\\.([^.]+)$',
      EXT_STATSD_MOGRIFIERS_RL_NAME: 'ratelimit.service.rate_limit.$3',
      EXT_STATSD_MOGRIFIERS_RL_TAGS: 'domain:$1,descriptor:$2',
      EXT_STATSD_MOGRIFIERS_SERVER_PATTERN: '^ratelimit_server\\.(.*)\\.total_requests$',
      EXT_STATSD_MOGRIFIERS_SERVER_NAME: 'ratelimit_server.total_requests',
      EXT_STATSD_MOGRIFIERS_SERVER_TAGS: 'method:$1',
    });
    const registry = new StatsRegistry();
    running = startStatsSinks(settings.stats, registry);
    registry.counter('ratelimit.service.rate_limit.mongo.key1_v1.key2.over_limit').add(4);
    registry.counter('ratelimit_server.ShouldRateLimit.total_requests').inc();
    registry.counter('ratelimit.service.config_load_success').inc();
    running.flusher?.flush();
    const lines = await udp.waitFor(3);
    expect(lines.sort()).toEqual([
      'ratelimit.service.config_load_success:1|c|#env:prod',
      'ratelimit.service.rate_limit.over_limit:4|c|#env:prod,domain:mongo,descriptor:key1_v1.key2',
      'ratelimit_server.total_requests:1|c|#env:prod,method:ShouldRateLimit',
    ]);
  });

  it('the flush loop runs on STATS_FLUSH_INTERVAL without being called', async () => {
    const udp = await udpListener();
    listener = udp.socket;
    const settings = parseObservabilitySettings({
      STATSD_HOST: '127.0.0.1',
      STATSD_PORT: String(udp.port),
      STATS_FLUSH_INTERVAL: '50ms',
    });
    const registry = new StatsRegistry();
    running = startStatsSinks(settings.stats, registry);
    registry.counter('ratelimit.service.config_load_error').inc();
    expect(await udp.waitFor(1)).toEqual(['ratelimit.service.config_load_error:1|c']);
  });
});

describe('stdout sink and DISABLE_STATS', () => {
  it('USE_STATSD=false writes the lines to standard output', async () => {
    const out: string[] = [];
    const settings = parseObservabilitySettings({ USE_STATSD: 'false' });
    const registry = new StatsRegistry();
    running = startStatsSinks(settings.stats, registry, (t) => out.push(t));
    registry.counter('ratelimit.service.config_load_success').add(2);
    running.flusher?.flush();
    expect(out.join('')).toBe('ratelimit.service.config_load_success:2|c\n');
  });

  it('DISABLE_STATS=true starts no sink', () => {
    const settings = parseObservabilitySettings({ DISABLE_STATS: 'true' });
    running = startStatsSinks(settings.stats, new StatsRegistry());
    expect(running.flusher).toBeUndefined();
  });
});
