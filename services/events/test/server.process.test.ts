/**
 * The real entry point as a child process with no settings but a data folder: it starts on PGlite,
 * writes a development JWT secret once, accepts a token minted by `npm run token`, refuses unsigned
 * tokens, and shuts down cleanly on SIGTERM.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startServiceProcess } from '@platform/testkit/app';
import { afterAll, describe, expect, it } from 'vitest';
import { validBody } from './helpers.js';

const root = resolve(import.meta.dirname, '..');
const run = promisify(execFile);
let workDir: string | undefined;

afterAll(async () => {
  if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
});

describe('server process on embedded defaults', () => {
  it('starts, mints a usable dev token, and on SIGTERM finishes in-flight requests before exiting', async () => {
    workDir = await mkdtemp(join(tmpdir(), 'events-proc-'));
    const env = { INIT_CWD: workDir, LOG_LEVEL: 'info', DATABASE_URL: '', JWT_SECRET: '', JWT_JWKS_URL: '' };
    const server = await startServiceProcess({
      name: 'events',
      entry: join(root, 'src/server.ts'),
      // tsx resolves from the package; INIT_CWD makes ./data/events land in the temporary folder.
      cwd: root,
      env,
      port: 0,
      healthPath: '/health',
    });
    try {
      const secretFile = join(workDir, 'data/events/jwt-secret');
      expect((await stat(secretFile)).mode & 0o777).toBe(0o600);
      expect(server.output()).toContain('npm run token -w services/events');
      const secret = await readFile(secretFile, 'utf8');
      expect(server.output()).not.toContain(secret.trim());

      const { stdout } = await run(
        process.execPath,
        ['--import', 'tsx', join(root, 'scripts/token.ts'), 'erin'],
        {
          cwd: root,
          env: { ...process.env, ...env },
        },
      );
      const token = stdout.trim();
      const put = await fetch(`${server.url}/events/proc-1`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(validBody),
      });
      expect(put.status).toBe(201);
      expect(((await put.json()) as { createdBy: string }).createdBy).toBe('erin');

      const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"erin"}').toString('base64url')}.`;
      const refused = await fetch(`${server.url}/events/proc-2`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${unsigned}`, 'content-type': 'application/json' },
        body: JSON.stringify(validBody),
      });
      expect(refused.status).toBe(401);

      // A request still arriving when SIGTERM comes is completed before the process exits.
      const body = JSON.stringify(validBody);
      let stopping: Promise<void> | undefined;
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const request = httpRequest(
          `${server.url}/events/proc-3`,
          {
            agent: false, // a connection of its own, whose 'connect' is awaited below
            method: 'PUT',
            headers: {
              authorization: `Bearer ${token}`,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            },
          },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode));
          },
        );
        request.on('error', reject);
        request.write(body.slice(0, 10));
        // SIGTERM once the server holds this request: connections are accepted in order, so once it
        // has answered a connection opened after this one was, it has accepted this one (a fixed wait
        // could end before that on a loaded machine, and the connection would be reset unaccepted).
        request.once('socket', (socket) =>
          socket.once('connect', () => {
            fetch(`${server.url}/health`)
              .then((response) => response.arrayBuffer())
              .then(() => {
                stopping = server.stop();
                setTimeout(() => request.end(body.slice(10)), 300);
              }, reject);
          }),
        );
      });
      expect(status).toBe(201);
      await stopping;
    } finally {
      await server.stop();
    }
    expect(server.isRunning()).toBe(false);
    expect(server.output()).toContain('shutting down');
    expect(server.output()).not.toContain('shutdown timed out');
  }, 90_000);
});
