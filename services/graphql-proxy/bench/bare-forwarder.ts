import { Pool } from 'undici';
import { serveBodies } from './bare-http.js';

/**
 * The second anchor of the miss benchmark: the least a proxy can do on a miss. A bare node:http
 * server that forwards each POST body to `UPSTREAM_URL` over an undici keep-alive pool and answers
 * with the upstream's status and body: no parsing, no cache, no headers of its own. The latency it
 * adds over calling the upstream directly is what one more loopback hop costs on this machine, the
 * floor under the proxy's added latency.
 */
const upstream = new URL(process.env['UPSTREAM_URL'] ?? '');
const pool = new Pool(upstream.origin, { connections: 64 });
serveBodies((body, response) => {
  pool
    .request({
      path: upstream.pathname,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    .then(async (answer) => {
      const text = await answer.body.text();
      response.writeHead(answer.statusCode, { 'content-type': 'application/json; charset=utf-8' });
      response.end(text);
    })
    .catch(() => {
      response.writeHead(502);
      response.end();
    });
});
