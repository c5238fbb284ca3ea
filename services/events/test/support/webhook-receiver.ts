/**
 * A webhook receiver as a customer would write it: every request is checked with the npm
 * `standardwebhooks` library's `verify()` against the secret of its path (`/hook/<name>`), refused
 * with 400 when it does not verify, and answered as the test says (200 by default; a status, a
 * `retry-after`, a redirect, a hang). In-process (`startReceiver`) or as a child process (run this
 * file: it prints `listening <port>`; `POST /_control/secret/<name>` sets a secret, `GET
 * /_control/received/<name>` answers what was accepted), so a test can SIGSTOP or kill it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  timestamp: number;
  signatures: string[];
  type: string;
  data: Record<string, unknown>;
  /** When it arrived (this process's clock, ms). */
  at: number;
  /** The bytes and the three webhook headers as received, to verify again with another secret. */
  raw: string;
  headers: Record<string, string>;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Never answer (the sender's timeout decides). */
  hang?: boolean;
}

export interface Receiver {
  readonly port: number;
  url(name: string): string;
  setSecret(name: string, secret: string): void;
  /** How the next requests of `name` are answered (after verification), in turn; then 200. */
  answers(name: string, ...answers: Answer[]): void;
  /** Every verified request of `name`, in arrival order (retries included). */
  received(name: string): Received[];
  /** Requests that did not verify (any path). */
  readonly refused: number;
  /** Requests to paths that are not `/hook/<name>` (a followed redirect would land there). */
  readonly strays: string[];
  close(): Promise<void>;
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `delayMs`: every verified request is answered this much later (a receiver doing some work). */
export async function startReceiver(port = 0, delayMs = 0): Promise<Receiver> {
  const secrets = new Map<string, string>();
  const scripted = new Map<string, Answer[]>();
  const accepted = new Map<string, Received[]>();
  const strays: string[] = [];
  const hanging = new Set<ServerResponse>();
  let refused = 0;

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = request.url ?? '';
    const body = await bodyOf(request);
    const control = /^\/_control\/(secret|received)\/([\w-]+)$/.exec(path);
    if (control) {
      if (control[1] === 'secret') secrets.set(control[2]!, body);
      response.setHeader('content-type', 'application/json');
      response.end(control[1] === 'secret' ? '{}' : JSON.stringify(accepted.get(control[2]!) ?? []));
      return;
    }
    const hook = /^\/hook\/([\w-]+)$/.exec(path);
    if (!hook) {
      strays.push(path);
      response.statusCode = 404;
      response.end();
      return;
    }
    const name = hook[1]!;
    let payload: { type: string; data: Record<string, unknown> };
    try {
      payload = new Webhook(secrets.get(name) ?? 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').verify(
        body,
        request.headers as Record<string, string>,
      ) as typeof payload;
    } catch {
      refused += 1;
      response.statusCode = 400;
      response.end('signature does not verify');
      return;
    }
    const list = accepted.get(name) ?? [];
    accepted.set(name, list);
    list.push({
      id: String(request.headers['webhook-id']),
      timestamp: Number(request.headers['webhook-timestamp']),
      signatures: String(request.headers['webhook-signature']).split(' '),
      type: payload.type,
      data: payload.data,
      at: Date.now(),
      raw: body,
      headers: {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      },
    });
    const answer = scripted.get(name)?.shift() ?? { status: 200 };
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (answer.hang) {
      hanging.add(response);
      response.on('close', () => hanging.delete(response));
      return;
    }
    response.writeHead(answer.status, answer.headers ?? {});
    response.end('ok');
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch(() => {
      response.statusCode = 500;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as { port: number }).port;
  return {
    port: bound,
    url: (name) => `http://127.0.0.1:${bound}/hook/${name}`,
    setSecret: (name, secret) => secrets.set(name, secret),
    answers: (name, ...answers) => scripted.set(name, [...(scripted.get(name) ?? []), ...answers]),
    received: (name) => [...(accepted.get(name) ?? [])],
    get refused() {
      return refused;
    },
    strays,
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// As a child process: `node --import tsx webhook-receiver.ts [port [delayMs]]`.
if (process.argv[1]?.endsWith('webhook-receiver.ts')) {
  const receiver = await startReceiver(Number(process.argv[2] ?? 0), Number(process.argv[3] ?? 0));
  process.stdout.write(`listening ${receiver.port}\n`);
}
