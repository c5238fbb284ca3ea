/**
 * The merchant side of the callback benchmark: a bare node:http server that reads the body and
 * answers 200, counting what it got (`GET /count`: the count and the first arrival's time). Both the gateway's deliveries and the anchor's
 * direct posts go to it.
 */
import { createServer } from 'node:http';

let count = 0;
/** When the first callback since the last `POST /reset` arrived (Unix ms), so the bench times from it. */
let first: number | null = null;
const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/health') return response.end('{"status":"ok"}');
  if (request.method === 'GET' && request.url === '/count')
    return response.end(JSON.stringify({ count, first }));
  if (request.method === 'POST' && request.url === '/reset') {
    first = null;
    return response.end('{}');
  }
  request.on('data', () => undefined);
  request.on('end', () => {
    count += 1;
    first ??= Date.now();
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
