/**
 * The WebSocket twin of bench/e2e-client.mjs (the same orders, the same closed loop), run as a child
 * process of bench/feed.ts: one feed connection per API key, `auth` once, then `order.submit` one
 * after the other on each connection for `ms`, each answer awaited before the next (docs/feed.md,
 * Order entry). The frames are built before the clock starts; it reports the count, latencies and
 * the CPU time the generator itself used, as e2e-client.mjs does.
 */
import { createHmac } from 'node:crypto';
import { WebSocket } from 'ws';

/** @type {{url: string, keys: {apiKey: string, secret: string}[], ms: number, perKey: number}} */
const job = await new Promise((resolve) => process.once('message', resolve));

/** The same i-th order of connection `index` as bench/e2e-client.mjs sends. */
function params(index, i) {
  const sell = (i + index) % 2 === 0;
  const price = 1_500_000 + (((i * 7 + index * 13) % 11) - 5) * 1_000;
  return { symbol: 'btcuah', type: 'limit', amount: sell ? '-0.001' : '0.001', price: String(price) };
}

/** Opens and authenticates one connection; resolves with it once `authenticated` came. */
function open(key) {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(job.url);
    socket.once('error', reject);
    socket.once('open', () => {
      const nonce = String(Date.now());
      const signature = createHmac('sha384', key.secret).update(`/v3/ws${nonce}{}`).digest('hex');
      socket.send(JSON.stringify({ op: 'auth', key: key.apiKey, nonce, signature }));
    });
    socket.once('message', (data) => {
      const frame = JSON.parse(data.toString());
      if (frame.event === 'authenticated') resolve(socket);
      else reject(new Error(`auth refused: ${data}`));
    });
  });
}

/** Sends the prepared frames one after the other on `socket` until `until`. */
function run(socket, frames, until, latencies, errors) {
  return new Promise((resolve) => {
    let next = 0;
    let started = 0;
    const send = () => {
      if (performance.now() >= until || next >= frames.length) {
        socket.off('message', answer);
        resolve();
        return;
      }
      started = performance.now();
      socket.send(frames[next]);
      next += 1;
    };
    const answer = (data) => {
      latencies.push(performance.now() - started);
      // An error answer carries `"error"` before any result could: a cheap test, no parse.
      if (data.includes('"error"')) errors.n += 1;
      send();
    };
    socket.on('message', answer);
    send();
  });
}

const sockets = await Promise.all(job.keys.map(open));
const prepared = job.keys.map((_, index) =>
  Array.from({ length: job.perKey }, (_, i) =>
    JSON.stringify({ op: 'order.submit', id: i, params: params(index, i) }),
  ),
);
process.send?.({ prepared: true });
await new Promise((resolve) => process.once('message', resolve));
/** @type {number[]} */
const latencies = [];
const errors = { n: 0 };
const cpuRun = process.cpuUsage();
const started = performance.now();
const until = started + job.ms;
await Promise.all(sockets.map((socket, i) => run(socket, prepared[i], until, latencies, errors)));
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuRun);
for (const socket of sockets) socket.terminate();
latencies.sort((a, b) => a - b);
const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
process.send?.(
  {
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    requests: latencies.length,
    errors: errors.n,
    errorStatuses: {},
    perSecond: latencies.length / seconds,
    p50: at(0.5),
    p99: at(0.99),
  },
  () => process.disconnect(),
);
