import { once } from 'node:events';
import http2 from 'node:http2';
import { connect } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type ManagedProcess, servicePid, spawnManaged } from '@platform/testkit/process';
import { until } from '@platform/testkit/wait';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AUTH_HEADER,
  channelAuth,
  FORWARD_PATH,
  type ForwardAnswer,
  type ForwardedRequest,
} from '../../src/cluster/forward.js';
import { ForwardClient, ForwardFailed, LIVENESS } from '../../src/cluster/forward-client.js';
import { type ListenerLimits, startForwardServer } from '../../src/cluster/forward-server.js';
import { encodeWire, signAnswer, wireKeys } from '../../src/cluster/wire.js';
import { rawPeer } from './raw-peer.js';

// The internal channel between the nodes (src/cluster/forward*.ts) against what a hostile peer on
// the nodes' network can do (issue 41): rewrite or move answers, open sessions and streams without
// the key and keep them, and a paused owner that keeps its connections open.
const KEY = Buffer.alloc(32, 7);
const keys = wireKeys(KEY);
const serviceDir = fileURLToPath(new URL('../..', import.meta.url));
const FORWARDED: ForwardedRequest = {
  market: 'btcuah',
  request: { type: 'limit', accountId: 1, side: 'buy', price: 1_500_000n, amount: 1n },
  nonce: { keyId: 1, protocol: 'v2', value: 1_800_000_000_000 },
};
const ACCEPTED = encodeWire({
  kind: 'outcome',
  consumed: true,
  outcome: { ok: false, code: 'INSUFFICIENT_FUNDS', message: 'insufficient funds' },
} satisfies ForwardAnswer);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function client(timeoutMs?: number, liveness = LIVENESS): ForwardClient {
  const forward = new ForwardClient(KEY, timeoutMs, liveness);
  cleanups.push(() => forward.close());
  return forward;
}

async function failure(promise: Promise<unknown>): Promise<ForwardFailed> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ForwardFailed);
  return error as ForwardFailed;
}

/**
 * A peer that opens channels as an owner does and answers each request line with `answer(number,
 * requestSignature, index)`: what a relay that rewrites the owner's lines delivers.
 */
function answeringPeer(
  answer: (number: string, signature: string, index: number) => string,
): Promise<string> {
  let index = 0;
  return rawPeer((stream) => {
    stream.respond({ ':status': 200 });
    stream.setEncoding('utf8');
    stream.on('data', (text: string) => {
      for (const line of text.split('\n').filter(Boolean)) {
        const [number = '', , signature = ''] = line.split(' ');
        stream.write(`${answer(number, signature, index)}\n`);
        index += 1;
      }
    });
  }, cleanups);
}

describe('answers are signed and bound to their request', () => {
  it('a correctly signed answer is believed', async () => {
    const url = await answeringPeer(
      (number, signature) =>
        `${number} 200 ${signAnswer(keys.answer, number, signature, '200', ACCEPTED)} ${ACCEPTED}`,
    );
    await expect(client().send(url, FORWARDED)).resolves.toMatchObject({ kind: 'outcome' });
  });

  it('an answer whose body was replaced is an unknown outcome, not the forged refusal', async () => {
    const genuine = encodeWire({ kind: 'not_owner' });
    const url = await answeringPeer(
      // Signed for the owner's body; the relay swapped the body.
      (number, signature) =>
        `${number} 200 ${signAnswer(keys.answer, number, signature, '200', genuine)} ${ACCEPTED}`,
    );
    const error = await failure(client().send(url, FORWARDED));
    expect(error.maybeSent).toBe(true);
    expect(error.message).toMatch(/failed its check/);
  });

  it('an unsigned answer, the format before signing, is an unknown outcome', async () => {
    const url = await answeringPeer((number) => `${number} 200 ${ACCEPTED}`);
    expect((await failure(client().send(url, FORWARDED))).maybeSent).toBe(true);
  });

  it('an answer moved from another request does not verify on this one', async () => {
    const first: { number?: string; signature?: string } = {};
    const url = await answeringPeer((number, signature, index) => {
      if (index === 0) Object.assign(first, { number, signature });
      // The first request's genuine answer, replayed as the answer of each later one.
      const line = signAnswer(keys.answer, first.number!, first.signature!, '200', ACCEPTED);
      return `${number} 200 ${line} ${ACCEPTED}`;
    });
    const forward = client();
    await expect(forward.send(url, FORWARDED)).resolves.toMatchObject({ kind: 'outcome' });
    // The same request body again (another request on the channel: a new number and time).
    const error = await failure(forward.send(url, FORWARDED));
    expect(error.maybeSent).toBe(true);
  });

  it('a forged "signature refused" (401) is not taken as "not run": it could send the order twice', async () => {
    const url = await answeringPeer((number) => `${number} 401 ${'0'.repeat(64)} {}`);
    expect((await failure(client().send(url, FORWARDED))).maybeSent).toBe(true);
  });

  it('a genuine 401 (another key) says the request did not run', async () => {
    let ran = 0;
    const server = await startForwardServer({
      host: '127.0.0.1',
      port: 0,
      key: KEY,
      entry: async () => {
        ran += 1;
        return { kind: 'not_owner' };
      },
      onError: () => {},
    });
    cleanups.push(() => server.close());
    // The channel opens (same channel key), but the request is signed with another request key:
    // what the owner answers is still signed with the cluster's answer key.
    const url = `http://127.0.0.1:${server.port}`;
    const session = http2.connect(url);
    cleanups.push(() => void session.destroy());
    const stream = session.request({
      ':method': 'POST',
      ':path': FORWARD_PATH,
      [AUTH_HEADER]: channelAuth(keys, Date.now()),
    });
    stream.setEncoding('utf8');
    let text = '';
    stream.on('data', (chunk: string) => (text += chunk));
    stream.write(`1 ${Date.now()} ${'a'.repeat(64)} ${encodeWire(FORWARDED)}\n`);
    await until('the 401 line', async () => text.includes('\n'));
    const [number, status, signature, body] = text.trim().split(' ');
    expect([number, status, body]).toEqual(['1', '401', '{}']);
    expect(signature).toBe(signAnswer(keys.answer, '1', 'a'.repeat(64), '401', '{}'));
    expect(ran).toBe(0);
  });
});

/** An owner's listener with `limits`, in this process. */
async function listener(limits: Partial<ListenerLimits>): Promise<string> {
  const server = await startForwardServer({
    host: '127.0.0.1',
    port: 0,
    key: KEY,
    entry: async () => ({ kind: 'not_owner' }),
    onError: () => {},
    limits,
  });
  cleanups.push(() => server.close());
  return `http://127.0.0.1:${server.port}`;
}

/** A raw HTTP/2 session to `url`, closed after the test; `closed` once the listener ended it. */
async function rawSession(
  url: string,
): Promise<{ session: http2.ClientHttp2Session; closed: () => boolean }> {
  const session = http2.connect(url);
  session.on('error', () => {});
  let closed = false;
  session.on('close', () => (closed = true));
  cleanups.push(() => void session.destroy());
  await new Promise<void>((resolve) => {
    session.once('connect', () => resolve());
    session.once('close', () => resolve());
  });
  return { session, closed: () => closed };
}

/** Opens a stream and resolves with its response status, or the error code that ended it. */
function open(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders): Promise<string> {
  return new Promise((resolve) => {
    let stream: http2.ClientHttp2Stream;
    try {
      stream = session.request(
        { ':method': 'POST', ':path': FORWARD_PATH, ...headers },
        { endStream: false },
      );
    } catch (error) {
      resolve(`refused: ${(error as Error).message}`);
      return;
    }
    stream.on('response', (response) => resolve(String(response[':status'])));
    stream.on('error', (error) => resolve(`error: ${error.message}`));
    stream.on('close', () => resolve(`closed ${stream.rstCode}`));
  });
}

const HEADERS = 1;
const RST_STREAM = 3;
const REFUSED_STREAM = 7;

/** One HTTP/2 frame: 9-byte header (length, type, flags, stream id) and payload. */
function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(stream, 5);
  return Buffer.concat([header, payload]);
}

/** An HPACK header block of literal fields without indexing (names and values under 127 bytes). */
function headerBlock(fields: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(
      Buffer.from([0x00, name.length]),
      Buffer.from(name),
      Buffer.from([value.length]),
      Buffer.from(value),
    );
  }
  return Buffer.concat(parts);
}

/**
 * Opens `count` streams at once on one connection with raw frames, ignoring the listener's
 * SETTINGS, and returns the frames the listener answered on them within a second.
 */
async function rawStreams(
  port: number,
  count: number,
  auth: string,
): Promise<{ type: number; stream: number; code?: number }[]> {
  const socket = connect(port, '127.0.0.1');
  cleanups.push(() => void socket.destroy());
  await once(socket, 'connect');
  const block = headerBlock({
    ':method': 'POST',
    ':scheme': 'http',
    ':authority': `127.0.0.1:${port}`,
    ':path': FORWARD_PATH,
    [AUTH_HEADER]: auth,
  });
  const out = [Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), frame(4, 0, 0, Buffer.alloc(0))];
  // END_HEADERS, not END_STREAM: each stream stays open, as a channel does.
  for (let i = 0; i < count; i += 1) out.push(frame(HEADERS, 0x4, 1 + 2 * i, block));
  socket.write(Buffer.concat(out));
  const seen: { type: number; stream: number; code?: number }[] = [];
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 9 && pending.length >= 9 + pending.readUIntBE(0, 3)) {
      const length = pending.readUIntBE(0, 3);
      const type = pending[3]!;
      const stream = pending.readUInt32BE(5) & 0x7fffffff;
      if (type === 4 && (pending[4]! & 0x1) === 0) socket.write(frame(4, 0x1, 0, Buffer.alloc(0)));
      if (stream !== 0) {
        seen.push({ type, stream, ...(type === RST_STREAM ? { code: pending.readUInt32BE(9) } : {}) });
      }
      pending = pending.subarray(9 + length);
    }
  });
  await sleep(1_000);
  return seen;
}

describe('the internal listener bounds what an unauthenticated peer holds', () => {
  it('a stream without the channel signature is refused and its session closed: a flood of them gets one answer', async () => {
    const url = await listener({});
    const { session, closed } = await rawSession(url);
    const statuses = await Promise.all(Array.from({ length: 50 }, () => open(session, {})));
    expect(statuses.filter((status) => status === '401')).toHaveLength(1);
    expect(statuses.filter((status) => status === '200')).toHaveLength(0);
    await until('the listener closed the session', async () => closed());
    // A node with the key still gets its channel.
    await expect(client().send(url, FORWARDED)).resolves.toEqual({ kind: 'not_owner' });
  });

  it('sessions that open no authenticated channel are bounded in number and closed after authenticateWithinMs', async () => {
    const url = await listener({ maxUnauthenticatedPerAddress: 5, authenticateWithinMs: 500 });
    const sessions = await Promise.all(Array.from({ length: 20 }, () => rawSession(url)));
    // Beyond 5 from this address, closed as they arrive.
    await until(
      'the sessions beyond the bound closed',
      async () => sessions.filter((s) => s.closed()).length >= 15,
    );
    expect(sessions.filter((s) => !s.closed()).length).toBeLessThanOrEqual(5);
    await until('every unauthenticated session closed', async () => sessions.every((s) => s.closed()), 5_000);
    // The places are free again: a node with the key gets its channel.
    await expect(client().send(url, FORWARDED)).resolves.toEqual({ kind: 'not_owner' });
  });

  it('an authenticated session may hold maxStreamsPerSession streams at once, whatever the peer sends', async () => {
    const url = await listener({ maxStreamsPerSession: 3 });
    // Raw frames: Node's own client would queue the streams beyond the listener's SETTINGS itself.
    const frames = await rawStreams(Number(new URL(url).port), 10, channelAuth(keys, Date.now()));
    expect(frames.filter((f) => f.type === HEADERS)).toHaveLength(3);
    expect(frames.filter((f) => f.type === RST_STREAM && f.code === REFUSED_STREAM)).toHaveLength(7);
  });

  it('an authenticated session idle for idleMs is closed', async () => {
    const url = await listener({ idleMs: 400 });
    const { session, closed } = await rawSession(url);
    expect(await open(session, { [AUTH_HEADER]: channelAuth(keys, Date.now()) })).toBe('200');
    const openedAt = performance.now();
    await until('the idle session closed', async () => closed(), 5_000);
    expect(performance.now() - openedAt).toBeGreaterThanOrEqual(350);
  });
});

describe('a paused owner (SIGSTOP) that keeps its connections open', () => {
  /** The owner's listener in a process of its own (fixtures/paused-owner.ts), and its pid. */
  async function pausedOwner(): Promise<{
    url: string;
    pid: number;
    arrived: () => string[];
    proc: ManagedProcess;
  }> {
    let output = '';
    const proc = spawnManaged({
      name: 'paused-owner',
      command: process.execPath,
      args: ['--import', 'tsx', path.join(serviceDir, 'test/cluster/fixtures/paused-owner.ts')],
      cwd: serviceDir,
      onOutput: (text) => (output += text),
    });
    const port = await until('the owner listening', async () => /port (\d+)/.exec(output)?.[1], 60_000);
    // The node process under the testkit's watchdog shell.
    const pid = servicePid(proc.pid!);
    cleanups.push(async () => {
      process.kill(pid, 'SIGCONT');
      await proc.stop();
    });
    return {
      url: `http://127.0.0.1:${port}`,
      pid,
      proc,
      arrived: () => [...output.matchAll(/arrived (\S+)/g)].map((m) => m[1]!),
    };
  }

  it('takes no new request, and ends the ones it holds as unknown once the lease moved', async () => {
    const owner = await pausedOwner();
    const forward = client(30_000);
    // Sent under epoch 7 and arrived; the owner stops before its batch commits.
    const held = forward.send(owner.url, { ...FORWARDED, market: 'held' }, 7);
    let settled: unknown;
    held.then(
      () => (settled = 'answered'),
      (error: unknown) => (settled = error),
    );
    await until('the request at the owner', async () => owner.arrived().includes('held'));
    process.kill(owner.pid, 'SIGSTOP');
    const stoppedAt = performance.now();

    // New requests are not written to it once it missed its pings: surely not run, free to go to
    // the next owner (the node waits for the lease to move meanwhile).
    await sleep(LIVENESS.unresponsiveMs + 2 * LIVENESS.pingIntervalMs);
    const refused = await failure(forward.send(owner.url, FORWARDED, 7));
    expect(refused.maybeSent).toBe(false);
    expect(refused.message).toMatch(/does not answer/);
    expect(performance.now() - stoppedAt).toBeLessThan(3 * LIVENESS.unresponsiveMs + 2_000);

    // While the lease is still its own, the held request keeps waiting (the owner may wake and commit it).
    expect(forward.failWhereLeaseMoved(() => true)).toBe(0);
    expect(settled).toBeUndefined();
    // The lease moved: it ends now, as an unknown outcome (503 at the node), not after its 30 s timeout.
    expect(forward.failWhereLeaseMoved((_url, market, epoch) => !(market === 'held' && epoch === 7))).toBe(1);
    const error = await failure(held);
    expect(error.maybeSent).toBe(true);
    expect(error.message).toMatch(/lost the lease of held/);
    expect(performance.now() - stoppedAt).toBeLessThan(10_000);
  }, 90_000);

  it('an owner that wakes again takes requests again', async () => {
    const owner = await pausedOwner();
    const forward = client(30_000);
    await expect(forward.send(owner.url, FORWARDED, 7)).resolves.toEqual({ kind: 'not_owner' });
    process.kill(owner.pid, 'SIGSTOP');
    await sleep(LIVENESS.unresponsiveMs + 2 * LIVENESS.pingIntervalMs);
    expect((await failure(forward.send(owner.url, FORWARDED, 7))).maybeSent).toBe(false);
    process.kill(owner.pid, 'SIGCONT');
    await until('the owner to answer again', async () =>
      (await forward.send(owner.url, FORWARDED, 7).catch(() => undefined))?.kind === 'not_owner'
        ? true
        : undefined,
    );
  }, 90_000);
});
