import http from 'node:http';
import { listenOnFreePort } from '@platform/testkit/app';

/**
 * The test's own load balancer: each HTTP request goes to the next backend in turn (round robin,
 * per request, whatever the client's keep-alive), and the answer carries `x-backend: <index>`.
 */
export interface Balancer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startBalancer(backends: () => readonly string[]): Promise<Balancer> {
  let next = 0;
  const agent = new http.Agent({ keepAlive: false });
  const server = http.createServer((request, response) => {
    const targets = backends();
    const index = next % targets.length;
    next += 1;
    const target = new URL(targets[index] as string);
    const forwarded = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: request.url,
        method: request.method,
        headers: { ...request.headers, host: target.host },
        agent,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, { ...answer.headers, 'x-backend': String(index) });
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => {
      if (!response.headersSent) response.writeHead(502).end();
      else response.destroy();
    });
    request.pipe(forwarded);
  });
  const running = await listenOnFreePort({
    listen: ({ port, host }) =>
      new Promise((resolve) =>
        server.listen(port, host, () =>
          resolve(`http://${host}:${(server.address() as { port: number }).port}`),
        ),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return { url: running.url, close: () => running.close() };
}
