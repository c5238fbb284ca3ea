/**
 * The calendar feed against the JSON list of the same events (issue 45: "an ICS feed of 10,000
 * events within 2x the JSON list of the same events (streamed, bounded memory)"). A server process
 * on PostgreSQL with 10,000 events (every tenth PRIVATE, so 9,000 public), read cache off; in
 * alternating rounds:
 *   anchor:   GET /events (anonymous) following Link `next`: 90 pages of 100, the list's largest page
 *   measured: GET /events.ics, the whole feed of the same 9,000 events in one streamed answer
 * Also the feed's time to the first byte, and the server's resident memory sampled while it
 * streams the feed of 10,000 and of BENCH_BIG_EVENTS (50,000) events: bounded means the peak does
 * not grow with the feed.
 *
 *   npx tsx services/events/bench/ics.bench.ts      # BENCH_ROUNDS (7), BENCH_EVENTS (10000), BENCH_BIG_EVENTS (50000)
 */
import { readFileSync } from 'node:fs';
import { createPgClient } from '../src/storage/pg-client.js';
import { alternate, database, listAll, load, server, timed } from './features-kit.js';
import { seedEvents } from './seed.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const BIG = Number(process.env.BENCH_BIG_EVENTS ?? 50_000);

function rssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
}

/** The node process under the test kit's watchdog shell (its only child). */
function nodePid(shellPid: number): number {
  const children = readFileSync(`/proc/${shellPid}/task/${shellPid}/children`, 'utf8').trim().split(/\s+/);
  return Number(children[0]);
}

async function feedOnce(
  url: string,
): Promise<{ ms: number; firstByteMs: number; bytes: number; events: number }> {
  const start = performance.now();
  const response = await fetch(url);
  const reader = response.body?.getReader();
  if (reader === undefined) throw new Error('no body');
  let firstByteMs = Number.NaN;
  let bytes = 0;
  let events = 0;
  // The end of the previous chunk, so a marker split across two chunks is counted once.
  let carry = '';
  const marker = 'BEGIN:VEVENT';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (Number.isNaN(firstByteMs)) firstByteMs = performance.now() - start;
    bytes += value.length;
    const text = carry + Buffer.from(value).toString('latin1');
    events += text.split(marker).length - 1;
    carry = text.slice(-(marker.length - 1));
  }
  return { ms: performance.now() - start, firstByteMs, bytes, events };
}

async function peakWhileStreaming(
  pid: number,
  url: string,
): Promise<{ baseKiB: number; peakKiB: number; bytes: number }> {
  const baseKiB = rssKiB(pid);
  let peakKiB = baseKiB;
  const sampler = setInterval(() => {
    peakKiB = Math.max(peakKiB, rssKiB(pid));
  }, 10);
  const { bytes } = await feedOnce(url);
  clearInterval(sampler);
  return { baseKiB, peakKiB: Math.max(peakKiB, rssKiB(pid)), bytes };
}

async function seeded(count: number) {
  const db = await database();
  const client = createPgClient({ url: db.url, poolMax: 1 });
  const { migrate } = await import('../src/storage/migrations.js');
  await migrate(client);
  await seedEvents(client, count);
  await client.query('VACUUM ANALYZE');
  await client.close();
  const proc = await server(db, { READ_CACHE_MAX_ENTRIES: '0', WEBHOOK_DISPATCH: 'false' });
  return { db, proc };
}

const small = await seeded(EVENTS);
try {
  const loadBefore = load();
  const expected = Math.round(EVENTS * 0.9);
  const listed = await listAll(small.proc.url, '/events?limit=100');
  const once = await feedOnce(`${small.proc.url}/events.ics`);
  if (listed !== expected || once.events !== expected)
    throw new Error(`listed ${listed}, feed ${once.events}`);
  let firstByte: number[] = [];
  const result = await alternate(
    () => timed(() => listAll(small.proc.url, '/events?limit=100')),
    async () => {
      const feed = await feedOnce(`${small.proc.url}/events.ics`);
      firstByte.push(feed.firstByteMs);
      return feed.ms;
    },
  );
  firstByte = firstByte.sort((a, b) => a - b);
  const pid = nodePid(small.proc.pid ?? 0);
  const memorySmall = await peakWhileStreaming(pid, `${small.proc.url}/events.ics`);
  console.log(`load before ${loadBefore}, after ${load()} (1, 5, 15 min)`);
  console.log(
    `ICS of ${expected} events: ${result.measured.toFixed(0)} ms (${(once.bytes / 1024 / 1024).toFixed(1)} MiB, first byte after ` +
      `${firstByte[Math.floor(firstByte.length / 2)]?.toFixed(1)} ms); JSON list of the same (90 pages): ${result.anchor.toFixed(0)} ms; ` +
      `ratio ${result.ratio.toFixed(2)}x (target <= 2x) ${result.ratio <= 2 ? 'OK' : 'ABOVE'} | rounds ${result.ratios.map((r) => r.toFixed(2)).join(' ')}`,
  );
  console.log(
    `server RSS streaming ${expected} events: ${(memorySmall.baseKiB / 1024).toFixed(0)} MiB before, peak ${(memorySmall.peakKiB / 1024).toFixed(0)} MiB`,
  );
} finally {
  await small.proc.stop();
  await small.db.drop();
}

const big = await seeded(BIG);
try {
  const pid = nodePid(big.proc.pid ?? 0);
  await feedOnce(`${big.proc.url}/events.ics`); // warm-up
  const memoryBig = await peakWhileStreaming(pid, `${big.proc.url}/events.ics`);
  console.log(
    `server RSS streaming ${Math.round(BIG * 0.9)} events (${(memoryBig.bytes / 1024 / 1024).toFixed(1)} MiB of text): ` +
      `${(memoryBig.baseKiB / 1024).toFixed(0)} MiB before, peak ${(memoryBig.peakKiB / 1024).toFixed(0)} MiB`,
  );
} finally {
  await big.proc.stop();
  await big.db.drop();
}
