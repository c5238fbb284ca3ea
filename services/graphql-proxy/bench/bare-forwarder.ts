import http from 'node:http';
import { Pool } from 'undici';

/**
 * The second anchor of the miss benchmark: the least a proxy can do on a miss. A bare node:http
 * server that forwards each POST body to `UPSTREAM_URL` over an undici keep-alive pool and answers
 * with the upstream's status and body: no parsing, no cache, no headers of its own. The latency it
 * adds over calling the upstream directly is what one more loopback hop costs on this machine, the
 * floor under the proxy's added latency.
 */
const upstream = new URL(process.env['UPSTREAM_URL'] ?? '');
const pool = new Pool(upstream.origin, { connections: 64 });
const server = http.createServer((request, response) => {
  if (request.url === '/health') {
    response.end('{"status":"ok"}');
    return;
  }
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    pool
      .request({
        path: upstream.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat(chunks),
      })
      .then(async (answer) => {
        const body = await answer.body.text();
        response.writeHead(answer.statusCode, { 'content-type': 'application/json; charset=utf-8' });
        response.end(body);
      })
      .catch(() => {
        response.writeHead(502);
        response.end();
      });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env['PORT']), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
