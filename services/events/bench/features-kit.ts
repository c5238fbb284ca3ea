/**
 * What the benchmarks of sync, calendar feeds and webhooks share (issue 45): a server process of
 * the real entry point on a fresh PostgreSQL database, tokens, timed requests, and the machine's
 * load printed beside every figure. Figures are same-run ratios, rounds alternating (ABBA), medians.
 */
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { createTestDatabase, type TestDatabase } from '@platform/testkit/postgres';
import { median } from '@platform/testkit/stats';
import { SignJWT } from 'jose';

export const SECRET = 'bench-secret-bench-secret-bench-secret!!';
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const root = resolve(import.meta.dirname, '..');

export function load(): string {
  return loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
}

export async function token(sub: string, member = false): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(member ? { member: true } : {})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt(now)
    .setExpirationTime(now + 3_600)
    .sign(new TextEncoder().encode(SECRET));
}

export async function database(): Promise<TestDatabase> {
  return createTestDatabase('events_bench');
}

export async function server(db: TestDatabase, env: Record<string, string> = {}): Promise<ServiceProcess> {
  return startServiceProcess({
    name: 'events',
    entry: resolve(root, 'src/server.ts'),
    cwd: root,
    port: 0,
    healthPath: '/health',
    env: { DATABASE_URL: db.url, JWT_SECRET: SECRET, LOG_LEVEL: 'warn', METRICS_PORT: 'off', ...env },
  });
}

/** Milliseconds `work` takes. */
export async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/**
 * `ROUNDS` rounds of (anchor, measured), the order alternating; answers the medians and the median
 * of the per-round ratios measured / anchor (for times: >1 is slower).
 */
export async function alternate(
  anchor: () => Promise<number>,
  measured: () => Promise<number>,
  rounds = ROUNDS,
): Promise<{ anchor: number; measured: number; ratio: number; ratios: number[] }> {
  const a: number[] = [];
  const m: number[] = [];
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      a.push(await anchor());
      m.push(await measured());
    } else {
      m.push(await measured());
      a.push(await anchor());
    }
  }
  const ratios = m.map((value, i) => value / (a[i] as number));
  return { anchor: median(a), measured: median(m), ratio: median(ratios), ratios };
}

export async function getText(
  url: string,
  auth?: string,
): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(
    url,
    auth === undefined ? {} : { headers: { authorization: `Bearer ${auth}` } },
  );
  return { status: response.status, text: await response.text(), headers: response.headers };
}

/** Follows `Link: <...>; rel="next"` from `path` to the end; answers the events read. */
export async function listAll(base: string, path: string, auth?: string): Promise<number> {
  let next: string | undefined = path;
  let count = 0;
  while (next !== undefined) {
    const page = await getText(`${base}${next}`, auth);
    if (page.status !== 200) throw new Error(`GET ${next}: ${page.status}`);
    count += (JSON.parse(page.text) as unknown[]).length;
    next = /<([^>]+)>;\s*rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
  }
  return count;
}
