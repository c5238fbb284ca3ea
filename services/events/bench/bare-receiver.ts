/**
 * A bare webhook receiver for the benchmarks: answers every POST 204 at once and counts them
 * (`GET /count`). No verification: the sender's cost alone is measured. Prints `listening <port>`.
 */
import { createServer } from 'node:http';

let count = 0;
const server = createServer((request, response) => {
  if (request.method === 'GET') {
    response.end(String(count));
    return;
  }
  request.resume();
  request.on('end', () => {
    count += 1;
    response.statusCode = 204;
    response.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
});
