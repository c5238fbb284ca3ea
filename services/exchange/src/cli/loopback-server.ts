import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CommandResult } from './command-target.js';
import { removeOperatorFile, writeOperatorFile } from './operator-file.js';
import { loopbackPeerUid } from './peer-user.js';

/** Largest request body: an argv (a few hundred bytes). */
const MAX_BODY = 65_536;

export const OPERATOR_PATH = '/operator/command';

export interface OperatorEndpoint {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The server's side of the operator tool while it holds the embedded database (README "Operator
 * tool"): an HTTP listener on 127.0.0.1 only (a port of its own, never the public listener) that
 * runs `POST /operator/command {"argv": [...]}` with `run` and answers the CommandResult. A request
 * is run only when
 * - it carries `authorization: Bearer <token>`, the 256-bit token written to `<DATA_DIR>/operator.json`
 *   (mode 0600: only the server's user reads it), compared in constant time; and
 * - on Linux, the connecting socket belongs to the server's own user or root (`/proc/net/tcp`,
 *   peer-user.ts), so a process of another user on the machine is refused even with the token in hand
 *   (a copied data folder, a leaked backup);
 * anything else is answered 403 before its body is read.
 */
export async function startOperatorEndpoint(
  dataDir: string,
  run: (argv: string[]) => Promise<CommandResult>,
): Promise<OperatorEndpoint> {
  const token = randomBytes(32).toString('hex');
  const expected = Buffer.from(`Bearer ${token}`);
  const uid = process.getuid?.();
  const server = createServer((request, response) => {
    const answer = (status: number, body: CommandResult) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    const refuse = (status: number, message: string) => {
      // Not read: the connection is closed after the answer.
      response.setHeader('connection', 'close');
      answer(status, { code: 2, stdout: '', stderr: `${message}\n` });
    };
    const presented = Buffer.from(request.headers.authorization ?? '');
    const peer = uid === undefined ? 'unknown' : loopbackPeerUid(request.socket);
    if (
      request.method !== 'POST' ||
      request.url !== OPERATOR_PATH ||
      presented.length !== expected.length ||
      !timingSafeEqual(presented, expected) ||
      !(peer === 'unknown' || peer === uid || peer === 0)
    ) {
      refuse(403, 'forbidden');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        refuse(413, 'the command is too long');
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (size > MAX_BODY) return;
      let argv: unknown;
      try {
        argv = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { argv?: unknown }).argv;
      } catch {
        argv = undefined;
      }
      if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) {
        refuse(400, 'expected {"argv": [strings]}');
        return;
      }
      run(argv).then(
        (result) => answer(200, result),
        () => answer(500, { code: 1, stdout: '', stderr: 'the command failed in the server; see its log\n' }),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  writeOperatorFile(dataDir, port, token);
  return {
    port,
    async close() {
      removeOperatorFile(dataDir);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
