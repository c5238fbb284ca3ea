/**
 * The merchant side of the callback benchmark: a bare node:http server that reads the body and
 * answers 200, counting what it got (`GET /count`). Both the gateway's deliveries and the anchor's
 * direct posts go to it.
 */
import { createServer } from 'node:http';

let count = 0;
const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/health') return response.end('{"status":"ok"}');
  if (request.method === 'GET' && request.url === '/count') return response.end(String(count));
  request.on('data', () => undefined);
  request.on('end', () => {
    count += 1;
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
