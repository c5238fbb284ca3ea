import http from 'node:http';

/**
 * The scaffolding both benchmark anchors share: a bare `node:http` server on `PORT` answering
 * `/health`, reading each request's whole body and handing it to `answer`; it stops on SIGTERM.
 */
export function serveBodies(answer: (body: Buffer, response: http.ServerResponse) => void): void {
  const server = http.createServer((request, response) => {
    if (request.url === '/health') {
      response.end('{"status":"ok"}');
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => answer(Buffer.concat(chunks), response));
  });
  server.keepAliveTimeout = 65_000;
  server.listen(Number(process.env['PORT']), '127.0.0.1');
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
