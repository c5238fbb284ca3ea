import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { startServiceProcess } from '@platform/testkit/app';
import { findListeningPort, httpAnswers } from '@platform/testkit/listening';
import { describe, expect, it } from 'vitest';
import { findGrpcPort, grpcHealthCheck } from '../integration/grpc-port.js';
import { makeCa, makeLeaf } from './certs.js';

/**
 * The wired service as a real process, tried as a new user would: pull metrics on, traffic over a
 * limit through POST /json, the `ratelimit_service_rate_limit_over_limit` series at /metrics, the
 * counters on the debug server and in statsd packets; and gRPC over TLS.
 */
const SERVICE = resolve(import.meta.dirname, '..', '..');

async function json(http: string, user: string): Promise<number> {
  const res = await fetch(`${http}/json`, {
    method: 'POST',
    body: JSON.stringify({ domain: 'example', descriptors: [{ entries: [{ key: 'user', value: user }] }] }),
  });
  await res.text();
  return res.status;
}

describe('observability of the running service', () => {
  it('pull metrics, debug server and statsd show the over-limit traffic', async () => {
    const udp = createSocket('udp4');
    const packets: string[] = [];
    udp.on('message', (m) => packets.push(...m.toString().split('\n')));
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
    const proc = await startServiceProcess({
      name: 'ratelimit-observability',
      entry: join(SERVICE, 'src/server.ts'),
      cwd: SERVICE,
      env: {
        // The test harness's own REDIS_URL (if set) is the reference's name of KVSTORE_URL: unset it.
        REDIS_URL: '',
        HOST: '127.0.0.1',
        GRPC_HOST: '127.0.0.1',
        // Every listener on port 0 (a port no other test can take); each is told by what it serves.
        GRPC_PORT: '0',
        USE_PULLMETRICS: 'true',
        PULLMETRICS_ADDR: '127.0.0.1:0',
        DEBUG_HOST: '127.0.0.1',
        DEBUG_PORT: '0',
        STATSD_HOST: '127.0.0.1',
        STATSD_PORT: String(udp.address().port),
        STATS_FLUSH_INTERVAL: '200ms',
        LOG_FORMAT: 'json',
      },
      portVariable: 'PORT',
      port: 0,
      healthPath: '/healthcheck',
    });
    try {
      const pid = proc.pid ?? -1;
      const metricsPort = await findListeningPort(pid, (p) =>
        httpAnswers(p, '/metrics', (t) => t.includes('ratelimit_service_config_load_success')),
      );
      const debugPort = await findListeningPort(pid, (p) => httpAnswers(p, '/rlconfig'), {
        exclude: [proc.port, metricsPort],
      });
      const http = `http://127.0.0.1:${proc.port}`;
      // The rule allows 3 per minute on the real clock: not in the last two seconds of a minute, so
      // the window cannot end between the first and the last of these quick calls.
      const intoMinute = Date.now() % 60_000;
      if (intoMinute > 58_000) await sleep(60_000 - intoMinute + 50);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push(await json(http, 'alice'));
      expect(statuses).toEqual([200, 200, 200, 429, 429]);

      const metrics = (await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()).split('\n');
      expect(metrics).toContain('ratelimit_service_rate_limit_over_limit{domain="example",key1="user"} 2');
      expect(metrics).toContain('ratelimit_service_rate_limit_total_hits{domain="example",key1="user"} 5');
      expect(metrics).toContain('ratelimit_service_rate_limit_within_limit{domain="example",key1="user"} 3');
      expect(metrics).toContain('ratelimit_service_config_load_success 1');

      const debug = `http://127.0.0.1:${debugPort}`;
      expect(await (await fetch(`${debug}/rlconfig`)).text()).toContain(
        'example.user: unit=MINUTE requests_per_unit=3, shadow_mode: false, quota_mode: false\n',
      );
      expect(await (await fetch(`${debug}/stats`)).text()).toContain(
        'ratelimit.service.rate_limit.example.user.over_limit: 2',
      );

      // Counters are flushed as deltas: under load the two over-limit hits may land in two flushes.
      const overLimitSent = () =>
        packets
          .map((p) => /^ratelimit\.service\.rate_limit\.example\.user\.over_limit:(\d+)\|c$/.exec(p))
          .reduce((sum, m) => sum + (m ? Number(m[1]) : 0), 0);
      while (overLimitSent() < 2) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(overLimitSent()).toBe(2);
      expect(proc.output()).toMatch(/"@message":"ratelimit listening"/);
    } finally {
      await proc.stop();
      udp.close();
    }
  });

  it('serves gRPC over TLS when GRPC_SERVER_USE_TLS is set', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rl-process-tls-'));
    const ca = makeCa(dir, 'ca');
    const server = makeLeaf(dir, ca, 'server', 'ratelimit', 'DNS:localhost,IP:127.0.0.1', 'serverAuth');
    const proc = await startServiceProcess({
      name: 'ratelimit-tls',
      entry: join(SERVICE, 'src/server.ts'),
      cwd: SERVICE,
      env: {
        // The test harness's own REDIS_URL (if set) is the reference's name of KVSTORE_URL: unset it.
        REDIS_URL: '',
        HOST: '127.0.0.1',
        GRPC_HOST: '127.0.0.1',
        GRPC_PORT: '0',
        DEBUG_PORT: '0',
        USE_STATSD: 'false',
        DISABLE_STATS: 'true',
        GRPC_SERVER_USE_TLS: 'true',
        GRPC_SERVER_TLS_CERT: server.cert,
        GRPC_SERVER_TLS_KEY: server.key,
      },
      portVariable: 'PORT',
      port: 0,
      healthPath: '/healthcheck',
    });
    try {
      const tls = grpc.credentials.createSsl(readFileSync(ca.cert));
      // The gRPC port is the one (besides HTTP's) that answers the health check over TLS.
      const grpcPort = await findGrpcPort(proc, [proc.port], tls);
      // HealthCheckResponse { status: SERVING (1) } is the two bytes 08 01
      expect((await grpcHealthCheck(grpcPort, tls)).toString('hex')).toBe('0801');
      await expect(grpcHealthCheck(grpcPort, grpc.credentials.createInsecure())).rejects.toMatchObject({
        code: grpc.status.UNAVAILABLE,
      });
    } finally {
      await proc.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
