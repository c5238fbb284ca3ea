/**
 * GET load generator of bench/tickers.ts, run as a child process so that it shares neither the
 * server's event loop nor its CPU accounting: `connections` keep-alive TCP connections, one request
 * in flight on each, the same prepared request bytes, for `ms`. Responses are read with a minimal
 * HTTP/1.1 parser (content-length only, which both measured routes send). Reports the count, the
 * response bytes of the last answer (so the caller can check both routes answered the same) and
 * the CPU time the generator used.
 */
import net from 'node:net';

/** @type {{url: string, path: string, connections: number, ms: number}} */
const job = await new Promise((resolve) => process.once('message', resolve));
const target = new URL(job.url);
const request = Buffer.from(`GET ${job.path} HTTP/1.1\r\nhost: ${target.host}\r\n\r\n`);
const HEADER_END = Buffer.from('\r\n\r\n');

let requests = 0;
let errors = 0;
let lastBody = '';

function connection(until) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: target.hostname, port: Number(target.port), noDelay: true });
    let pending = Buffer.alloc(0);
    const send = () => {
      if (performance.now() >= until) {
        socket.end();
        resolve();
        return;
      }
      socket.write(request);
    };
    socket.on('connect', send);
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        const end = pending.indexOf(HEADER_END);
        if (end < 0) return;
        const head = pending.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        if (Number(head.slice(9, 12)) !== 200) errors += 1;
        lastBody = pending.subarray(end + 4, end + 4 + length).toString('utf8');
        pending = pending.subarray(end + 4 + length);
        requests += 1;
        send();
      }
    });
  });
}

const cpuStart = process.cpuUsage();
const started = performance.now();
const until = started + job.ms;
await Promise.all(Array.from({ length: job.connections }, () => connection(until)));
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuStart);
process.send?.(
  {
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    requests,
    errors,
    perSecond: requests / seconds,
    lastBody,
  },
  () => process.disconnect(),
);
