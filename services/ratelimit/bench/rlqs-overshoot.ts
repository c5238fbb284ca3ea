import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@platform/testkit/ports';
import { startRedis } from '@platform/testkit/redis';
import { RlqsClient, type RlqsStream, type WireAction } from '../test/rlqs/rlqs-client.js';
import { ensureServiceBuilt, SERVICE, serviceNodeArgs } from './compiled.js';

/**
 * How far the sum admitted by every client can pass a rule's limit in one window (the RLQS
 * "overshoot"), measured (not a test):   cd services/ratelimit && npx tsx bench/rlqs-overshoot.ts
 * Two service processes on one Redis; CLIENTS (3) clients, alternately on each, each an emulation
 * of Envoy's rate_limit_quota filter as its code reads (global_client_impl.cc; no Envoy binary on
 * this machine): one bucket, usage reported every 5 s, the first request reported at once and
 * admitted (no_assignment_behavior ALLOW_ALL), a token bucket that starts full and refills
 * continuously at tokens_per_fill / fill_interval, kept when the same bucket is sent again
 * (compared on max_tokens, tokens_per_fill and the interval's nanos, as Envoy does), DENY_ALL and
 * ALLOW_ALL as blanket rules, an assignment dropped after its TTL. Each client sends DEMAND (20)
 * requests/s, far above its share. Rule: LIMIT (600) per minute, fixed window; WINDOWS (3) whole
 * epoch-aligned windows are counted (the first, where the clients start, is left out).
 */
const CLIENTS = Number(process.env.OVERSHOOT_CLIENTS ?? 3);
const DEMAND = Number(process.env.OVERSHOOT_DEMAND ?? 20);
const LIMIT = Number(process.env.OVERSHOOT_LIMIT ?? 600);
const WINDOWS = Number(process.env.OVERSHOOT_WINDOWS ?? 3);
const REPORT_MS = 5000;
const WINDOW_MS = 60_000;

interface Bucket {
  kind: 'none' | 'allow' | 'deny' | 'tb';
  tokens: number;
  max: number;
  perFill: number;
  fillS: number;
  fillNanos: number;
  refilledAt: number;
  expiresAt: number;
}

class EmulatedEnvoy {
  private readonly bucket: Bucket = {
    kind: 'none',
    tokens: 0,
    max: 0,
    perFill: 0,
    fillS: 0,
    fillNanos: 0,
    refilledAt: 0,
    expiresAt: 0,
  };
  private allowed = 0;
  private denied = 0;
  private subscribed = false;
  private seen = 0;
  /** Admitted requests by epoch window start (ms). */
  readonly admitted = new Map<number, number>();

  constructor(
    private readonly stream: RlqsStream,
    private readonly id: Record<string, string>,
  ) {}

  private apply(action: WireAction): void {
    const b = this.bucket;
    const now = Date.now();
    const assignment = action.quota_assignment_action;
    b.expiresAt = now + (assignment?.assignment_time_to_live?.seconds ?? 0) * 1000;
    const strategy = assignment?.rate_limit_strategy;
    if (strategy?.strategy === 'blanket_rule') {
      b.kind = strategy.blanket_rule === 'DENY_ALL' ? 'deny' : 'allow';
      return;
    }
    const tb = strategy?.token_bucket;
    if (!tb) return;
    const max = tb.max_tokens ?? 0;
    const perFill = tb.tokens_per_fill?.value ?? 0;
    const nanos = tb.fill_interval?.nanos ?? 0;
    const same = b.kind === 'tb' && b.max === max && b.perFill === perFill && b.fillNanos === nanos;
    if (!same) {
      Object.assign(b, { kind: 'tb', tokens: max, max, perFill, refilledAt: now });
      b.fillS = tb.fill_interval?.seconds ?? 1;
      b.fillNanos = nanos;
    }
  }

  /** Takes the answers and pushes that arrived since the last call. */
  private poll(): void {
    const list = this.stream.responses;
    for (; this.seen < list.length; this.seen++)
      for (const a of list[this.seen]!.bucket_action) this.apply(a);
  }

  request(): void {
    this.poll();
    const now = Date.now();
    const b = this.bucket;
    if (b.kind !== 'none' && now >= b.expiresAt) b.kind = 'none';
    let ok: boolean;
    if (b.kind === 'none' || b.kind === 'allow') ok = true;
    else if (b.kind === 'deny') ok = false;
    else {
      b.tokens = Math.min(b.max, b.tokens + ((now - b.refilledAt) / 1000) * (b.perFill / b.fillS));
      b.refilledAt = now;
      ok = b.tokens >= 1;
      if (ok) b.tokens -= 1;
    }
    if (ok) {
      this.allowed++;
      const w = Math.floor(now / WINDOW_MS) * WINDOW_MS;
      this.admitted.set(w, (this.admitted.get(w) ?? 0) + 1);
    } else this.denied++;
    if (!this.subscribed) {
      this.subscribed = true;
      this.report();
    }
  }

  report(): void {
    this.stream.report([{ bucket: this.id, allowed: this.allowed, denied: this.denied, elapsedSeconds: 5 }]);
    this.allowed = 0;
    this.denied = 0;
  }
}

function start(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, args, {
    cwd: SERVICE,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function main(): Promise<void> {
  const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`machine load average at the start: ${load()}`);
  await ensureServiceBuilt();
  const work = mkdtempSync(join(tmpdir(), 'rlqs-overshoot-'));
  mkdirSync(join(work, 'config'));
  writeFileSync(
    join(work, 'config', 'o.yaml'),
    `domain: o\ndescriptors:\n  - key: name\n    rate_limit: { unit: minute, requests_per_unit: ${LIMIT} }\n`,
  );
  const redis = await startRedis({ fresh: true });
  const ports = [await freePort(), await freePort()];
  const servers = ports.map((port) =>
    start(serviceNodeArgs(), {
      RUNTIME_ROOT: work,
      PORT: '0',
      GRPC_PORT: String(port),
      DEBUG_PORT: '0',
      REDIS_URL: '',
      KVSTORE_URL: `${redis.host}:${redis.port}`,
    }),
  );
  const timers: NodeJS.Timeout[] = [];
  try {
    await sleep(3000);
    const clients = ports.map((p) => new RlqsClient(`127.0.0.1:${p}`));
    const envoys = Array.from(
      { length: CLIENTS },
      (_, i) => new EmulatedEnvoy(clients[i % clients.length]!.stream('o'), { name: 'shared' }),
    );
    const started = Date.now();
    for (const [i, e] of envoys.entries()) {
      // Each Envoy's report timer starts with its stream, at its own phase.
      timers.push(
        setTimeout(() => timers.push(setInterval(() => e.report(), REPORT_MS)), (i * REPORT_MS) / CLIENTS),
      );
      timers.push(setInterval(() => e.request(), 1000 / DEMAND));
    }
    const firstFull = Math.ceil(started / WINDOW_MS) * WINDOW_MS;
    const end = firstFull + WINDOWS * WINDOW_MS;
    await sleep(end - Date.now() + 500);
    for (const t of timers) clearInterval(t);
    console.log(
      `\n${CLIENTS} emulated Envoys on 2 servers, ${DEMAND} requests/s each (${((CLIENTS * DEMAND * 60) / LIMIT).toFixed(1)}x the limit), rule ${LIMIT} per minute:`,
    );
    let worst = 0;
    for (let w = firstFull; w < end; w += WINDOW_MS) {
      const total = envoys.reduce((a, e) => a + (e.admitted.get(w) ?? 0), 0);
      worst = Math.max(worst, total - LIMIT);
      console.log(
        `  window ${new Date(w).toISOString().slice(11, 19)}: admitted ${total} (${envoys.map((e) => e.admitted.get(w) ?? 0).join(' + ')}), overshoot ${total - LIMIT} (${(((total - LIMIT) / LIMIT) * 100).toFixed(1)}% of the limit)`,
      );
    }
    console.log(`  worst overshoot ${worst} = ${((worst / LIMIT) * 100).toFixed(1)}% of the limit`);
    console.log(`machine load average at the end: ${load()}`);
    for (const c of clients) c.close();
  } finally {
    for (const t of timers) clearInterval(t);
    for (const s of servers) s.kill('SIGTERM');
    await sleep(500);
    await redis.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
