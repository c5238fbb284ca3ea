import http from 'node:http';

/**
 * An upstream for the benchmark whose behaviour is switched while it runs: `forward` to the blog,
 * `hang` (accept and never answer), `down` (drop the connection at once) or `ack` (answer every
 * request itself with a small successful GraphQL answer, so a replay measures the proxy, not the blog).
 */
export type SwitchMode = 'forward' | 'hang' | 'down' | 'ack';

export interface SwitchUpstream {
  readonly url: string;
  mode: SwitchMode;
  close(): Promise<void>;
}

const ACK = JSON.stringify({ data: { createTag: { tag: { id: 'dGVybTo5OTk=', name: 'bench' } } } });

export async function startSwitchUpstream(target: string): Promise<SwitchUpstream> {
  const targetUrl = new URL(target);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const state: { mode: SwitchMode } = { mode: 'forward' };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (state.mode === 'hang') return;
      if (state.mode === 'down') {
        request.socket.destroy();
        return;
      }
      if (state.mode === 'ack') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(ACK);
        return;
      }
      const forwarded = http.request(
        targetUrl,
        { method: 'POST', agent, headers: { ...request.headers, host: targetUrl.host } },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      forwarded.on('error', () => request.socket.destroy());
      forwarded.end(Buffer.concat(chunks));
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    get mode() {
      return state.mode;
    },
    set mode(mode: SwitchMode) {
      state.mode = mode;
      // A hanging or dropped upstream keeps no idle connection that would still answer.
      if (mode !== 'forward') agent.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
