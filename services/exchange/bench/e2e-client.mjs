/**
 * Load generator of bench/e2e.ts, run as a child process (plain JavaScript, no loader needed) so that
 * it shares neither the server's event loop nor its CPU accounting. One keep-alive TCP connection per
 * API key (nonces must rise per key), one request in flight on each, for `ms`; it reports the count,
 * latencies and the CPU time the generator itself used.
 *
 * The requests are signed before the clock starts and written as prepared bytes, and the responses
 * are read with a minimal HTTP/1.1 parser: a generator built on node:http and signing on the fly cost
 * about 0.2 ms of CPU per request on the 2-core machine, as much as the server's own work, and that
 * CPU was taken from the server it measures (the same way for both phases, but it flattened the
 * ratio). wrk or h2load cannot sign each request.
 *
 * BENCH_ERROR_LOG=<file>: the status and body of the first 20 answers other than 200 are appended there.
 */
import { createHmac } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import net from 'node:net';

const ERROR_LOG = process.env.BENCH_ERROR_LOG;

/** @type {{url: string, path: string, keys: {apiKey: string, secret: string}[], ms: number, perKey: number, barrier?: boolean}} */
const job = await new Promise((resolve) => process.once('message', resolve));
const target = new URL(job.url);

/** The body of the i-th order of connection `index`: alternating sides around a fixed price. */
function body(index, i) {
  const sell = (i + index) % 2 === 0;
  const price = 1_500_000 + (((i * 7 + index * 13) % 11) - 5) * 1_000;
  return JSON.stringify({
    symbol: 'btcuah',
    type: 'limit',
    amount: sell ? '-0.001' : '0.001',
    price: String(price),
  });
}

/** Signed request bytes for one connection, nonces rising from now. */
function prepare(index, count) {
  const key = job.keys[index];
  const first = Date.now();
  const requests = [];
  for (let i = 0; i < count; i += 1) {
    const text = body(index, i);
    const nonce = String(first + i);
    const signature = createHmac('sha384', key.secret).update(`${job.path}${nonce}${text}`).digest('hex');
    requests.push(
      Buffer.from(
        `POST ${job.path} HTTP/1.1\r\nhost: ${target.host}\r\ncontent-type: application/json\r\n` +
          `content-length: ${Buffer.byteLength(text)}\r\nsvc-nonce: ${nonce}\r\nsvc-apikey: ${key.apiKey}\r\n` +
          `svc-signature: ${signature}\r\n\r\n${text}`,
      ),
    );
  }
  return requests;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/** Sends the prepared requests one after the other on one connection until `until`. */
function connection(requests, until, latencies, errors) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: target.hostname, port: Number(target.port), noDelay: true });
    let next = 0;
    let started = 0;
    let pending = Buffer.alloc(0);
    const send = () => {
      if (performance.now() >= until || next >= requests.length) {
        socket.end();
        resolve();
        return;
      }
      started = performance.now();
      socket.write(requests[next]);
      next += 1;
    };
    socket.on('connect', send);
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      const end = pending.indexOf(HEADER_END);
      if (end < 0) return;
      const head = pending.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (pending.length < end + 4 + length) return;
      const status = Number(head.slice(9, 12));
      if (status !== 200 && ERROR_LOG && errors.n < 20) {
        appendFileSync(
          ERROR_LOG,
          `${status} ${pending.subarray(end + 4, end + 4 + length).toString('utf8')}\n`,
        );
      }
      pending = pending.subarray(end + 4 + length);
      latencies.push(performance.now() - started);
      if (status !== 200) {
        errors.n += 1;
        errors.byStatus[status] = (errors.byStatus[status] ?? 0) + 1;
      }
      send();
    });
  });
}

const cpuStart = process.cpuUsage();
const prepared = job.keys.map((_, index) => prepare(index, job.perKey));
const prepareCpu = process.cpuUsage(cpuStart);
// Generators started together (the metrics comparison loads two servers at once) start their clocks
// together: one that ran while the other was still signing would share the cores with that signing.
if (job.barrier) {
  process.send?.({ prepared: true });
  await new Promise((resolve) => process.once('message', resolve));
}
/** @type {number[]} */
const latencies = [];
/** @type {{ n: number, byStatus: Record<number, number> }} */
const errors = { n: 0, byStatus: {} };
const cpuRun = process.cpuUsage();
const started = performance.now();
const until = started + job.ms;
await Promise.all(prepared.map((requests) => connection(requests, until, latencies, errors)));
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuRun);
latencies.sort((a, b) => a - b);
const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
process.send?.(
  {
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    prepareSeconds: (prepareCpu.user + prepareCpu.system) / 1e6,
    requests: latencies.length,
    errors: errors.n,
    errorStatuses: errors.byStatus,
    perSecond: latencies.length / seconds,
    p50: at(0.5),
    p99: at(0.99),
  },
  () => process.disconnect(),
);
