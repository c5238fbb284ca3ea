import { readFileSync } from 'node:fs';
import http from 'node:http';

/**
 * The anchor of the cache-hit benchmark: a bare node:http server that reads the request body and
 * answers with a fixed body (the same bytes the proxy serves from its cache), with the same headers.
 */
const body = readFileSync(process.env['BODY_FILE'] ?? '', 'utf8');
const server = http.createServer((request, response) => {
  if (request.url === '/health') {
    response.end('{"status":"ok"}');
    return;
  }
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    JSON.parse(Buffer.concat(chunks).toString('utf8'));
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'x-cache': 'HIT' });
    response.end(body);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env['PORT']), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
