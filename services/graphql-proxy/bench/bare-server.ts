import { readFileSync } from 'node:fs';
import { serveBodies } from './bare-http.js';

/**
 * The anchor of the cache-hit benchmark: a bare node:http server that reads the request body and
 * answers with a fixed body (the same bytes the proxy serves from its cache), with the same headers.
 */
const body = readFileSync(process.env['BODY_FILE'] ?? '', 'utf8');
serveBodies((received, response) => {
  JSON.parse(received.toString('utf8'));
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'x-cache': 'HIT' });
  response.end(body);
});
