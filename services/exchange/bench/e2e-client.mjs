/**
 * Load generator of bench/e2e.ts (plain JavaScript: worker threads do not get the tsx loader), run in a worker thread so that it does not share the server's
 * event loop: `concurrency` loops, each with its own API key (nonces must rise per key), send signed
 * v3 requests over keep-alive HTTP for `ms` and report the count and latencies.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

/** @type {{url: string, path: string, keys: {apiKey: string, secret: string}[], ms: number}} */
const job = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: job.keys.length });
const target = new URL(job.url);

function send(path, body, headers) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: target.hostname, port: target.port, path, method: 'POST', agent, headers },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

async function loop(index, until, latencies, errors) {
  const key = job.keys[index];
  let nonce = Date.now();
  let i = 0;
  while (performance.now() < until) {
    i += 1;
    const sell = (i + index) % 2 === 0;
    const price = 1_500_000 + (((i * 7 + index * 13) % 11) - 5) * 1_000;
    const body = JSON.stringify({
      symbol: 'btcuah',
      type: 'limit',
      amount: sell ? '-0.001' : '0.001',
      price: String(price),
    });
    nonce = Math.max(nonce + 1, Date.now());
    const headers = {
      'content-type': 'application/json',
      'svc-nonce': String(nonce),
      'svc-apikey': key.apiKey,
      'svc-signature': createHmac('sha384', key.secret).update(`${job.path}${nonce}${body}`).digest('hex'),
    };
    const started = performance.now();
    const status = await send(job.path, body, headers);
    latencies.push(performance.now() - started);
    if (status !== 200) errors.n += 1;
  }
}

/** @type {number[]} */
const latencies = [];
const errors = { n: 0 };
const started = performance.now();
const until = started + job.ms;
await Promise.all(job.keys.map((_, index) => loop(index, until, latencies, errors)));
const seconds = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
parentPort?.postMessage({
  requests: latencies.length,
  errors: errors.n,
  perSecond: latencies.length / seconds,
  p50: at(0.5),
  p99: at(0.99),
});
agent.destroy();
