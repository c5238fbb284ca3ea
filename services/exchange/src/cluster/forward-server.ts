import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { databaseUnreachable } from '../db/unreachable.js';
import type { DeferredNonce } from '../http/request-context.js';
import {
  AUTH_HEADER,
  channelAuthValid,
  FORWARD_PATH,
  type ForwardAnswer,
  type ForwardedRequest,
  fields,
  LineReader,
  type LocalEntry,
} from './forward.js';
import { decodeWire, encodeWire, signAnswer, verifyWire, wireKeys } from './wire.js';

/**
 * What the internal listener admits (README "Running a cluster", Limits of the internal channel).
 * Anyone who reaches NODE_URL can open a TCP connection and HTTP/2 streams before proving anything,
 * so what such a peer may hold is bounded in number and in time; a node of the cluster needs one
 * session with one stream per peer node (forward-client.ts), a second one while it reconnects.
 */
export interface ListenerLimits {
  /** TCP connections at once (`server.maxConnections`); more are closed as they arrive. */
  readonly maxConnections: number;
  /** Sessions that have not opened an authenticated channel yet, at once, from everywhere; more are closed at once. */
  readonly maxUnauthenticated: number;
  /** The same from one address: one host cannot take every unauthenticated place. */
  readonly maxUnauthenticatedPerAddress: number;
  /** How long a session may go without opening an authenticated channel before it is closed. */
  readonly authenticateWithinMs: number;
  /** Streams a session may have open at once (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS). */
  readonly maxStreamsPerSession: number;
  /**
   * An authenticated session with no request line and no answer due for this long is closed.
   * Longer than the sender's own idle close (CHANNEL_IDLE_MS, 60 s), so a live node closes its idle
   * channel itself and this never cuts one under a request.
   */
  readonly idleMs: number;
}

export const LISTENER_LIMITS: ListenerLimits = {
  // A cluster of a few nodes holds a few sessions; room for 100 nodes with a reconnect each.
  maxConnections: 256,
  maxUnauthenticated: 64,
  maxUnauthenticatedPerAddress: 8,
  // A node opens its channel in the first packets after connecting; 5 s leaves a loaded machine slack.
  authenticateWithinMs: 5_000,
  // One channel per session; a few more for a stream being replaced.
  maxStreamsPerSession: 4,
  idleMs: 120_000,
};

/** How long a closing session may take to say goodbye (GOAWAY, answers in flight) before it is destroyed. */
const CLOSE_GRACE_MS = 1_000;

interface SessionState {
  authenticated: boolean;
  readonly address: string;
  lastActive: number;
  /** Requests of this session being run here (answers due). */
  pending: number;
  /** The session opened its first authenticated channel: no longer counted as unauthenticated, watched for idleness. */
  authenticate(): void;
}

/**
 * Listens for forwarded requests at `port` on `host` (0: a free port, returned); close it with the
 * returned function.
 */
export async function startForwardServer(options: {
  readonly host: string;
  readonly port: number;
  readonly key: Buffer;
  readonly entry: LocalEntry;
  readonly onError: (error: unknown) => void;
  readonly limits?: Partial<ListenerLimits>;
}): Promise<{ readonly port: number; close: () => Promise<void> }> {
  const limits = { ...LISTENER_LIMITS, ...options.limits };
  const keys = wireKeys(options.key);
  const server = http2.createServer({ settings: { maxConcurrentStreams: limits.maxStreamsPerSession } });
  server.maxConnections = limits.maxConnections;
  const sessions = new Map<http2.Http2Session, SessionState>();
  const unauthenticated = new Map<string, number>();
  let unauthenticatedTotal = 0;
  const channels = new Set<http2.ServerHttp2Stream>();

  const leaveUnauthenticated = (state: SessionState) => {
    if (state.authenticated) return;
    state.authenticated = true;
    unauthenticatedTotal -= 1;
    const left = (unauthenticated.get(state.address) ?? 1) - 1;
    if (left > 0) unauthenticated.set(state.address, left);
    else unauthenticated.delete(state.address);
  };
  const shut = (session: http2.Http2Session) => {
    if (session.destroyed) return;
    session.close();
    setTimeout(() => session.destroy(), CLOSE_GRACE_MS).unref();
  };

  server.on('session', (session) => {
    const address = session.socket?.remoteAddress ?? '';
    const fromHere = (unauthenticated.get(address) ?? 0) + 1;
    if (
      unauthenticatedTotal + 1 > limits.maxUnauthenticated ||
      fromHere > limits.maxUnauthenticatedPerAddress
    ) {
      session.destroy();
      return;
    }
    unauthenticatedTotal += 1;
    unauthenticated.set(address, fromHere);
    let idleTimer: NodeJS.Timeout | undefined;
    const watchIdle = (after: number) => {
      idleTimer = setTimeout(() => {
        const idle = performance.now() - state.lastActive;
        if (state.pending === 0 && idle >= limits.idleMs) shut(session);
        else watchIdle(state.pending === 0 ? limits.idleMs - idle : limits.idleMs);
      }, after);
      idleTimer.unref();
    };
    const authTimer = setTimeout(() => {
      if (!state.authenticated) session.destroy();
    }, limits.authenticateWithinMs);
    authTimer.unref();
    const state: SessionState = {
      authenticated: false,
      address,
      lastActive: performance.now(),
      pending: 0,
      authenticate() {
        if (state.authenticated) return;
        clearTimeout(authTimer);
        leaveUnauthenticated(state);
        watchIdle(limits.idleMs);
      },
    };
    sessions.set(session, state);
    session.on('error', () => {});
    session.once('close', () => {
      clearTimeout(authTimer);
      clearTimeout(idleTimer);
      leaveUnauthenticated(state);
      sessions.delete(session);
    });
  });

  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    const session = stream.session;
    const state = session ? sessions.get(session) : undefined;
    if (!session || !state) {
      stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      return;
    }
    const refuse = (status: number) => {
      // A peer that cannot open a channel gets no second try on this session.
      stream.respond({ ':status': status }, { endStream: true });
      shut(session);
    };
    if (headers[':method'] !== 'POST' || headers[':path'] !== FORWARD_PATH) return refuse(404);
    if (!channelAuthValid(keys, headers[AUTH_HEADER], Date.now())) return refuse(401);
    state.authenticate();
    state.lastActive = performance.now();
    channels.add(stream);
    stream.on('close', () => channels.delete(stream));
    stream.respond({ ':status': 200, 'content-type': 'text/plain' });
    stream.setEncoding('utf8');
    const reader = new LineReader();
    const answer = (number: string, requestSignature: string, status: number, body: string) => {
      const code = String(status);
      const signature = signAnswer(keys.answer, number, requestSignature, code, body);
      if (!stream.destroyed && stream.writable) stream.write(`${number} ${code} ${signature} ${body}\n`);
    };
    stream.on('data', (text: string) => {
      state.lastActive = performance.now();
      const lines = reader.push(text);
      if (!lines) {
        stream.close(http2.constants.NGHTTP2_PROTOCOL_ERROR);
        return;
      }
      for (const line of lines) {
        const [number = '', time = '', signature = '', body = ''] = fields(line, 4) ?? [];
        if (!/^[0-9]{1,15}$/.test(number)) {
          stream.close(http2.constants.NGHTTP2_PROTOCOL_ERROR);
          return;
        }
        if (!verifyWire(keys.request, Number(time), body, signature, Date.now())) {
          answer(number, signature, 401, '{}');
          continue;
        }
        state.pending += 1;
        void (async () => {
          let result: ForwardAnswer;
          try {
            const forwarded = decodeWire<ForwardedRequest>(body);
            const nonce: DeferredNonce | undefined = forwarded.nonce
              ? { ...forwarded.nonce, consumed: false }
              : undefined;
            result = await options.entry(forwarded, nonce);
          } catch (error) {
            if (databaseUnreachable(error)) {
              // The owner lost its database under the request: whether its batch committed is not
              // known, so the first node answers 503 and never sends it again (as the owner's own
              // route answers 503 for it), not 500.
              result = { kind: 'unknown' };
            } else {
              options.onError(error);
              result = { kind: 'error', message: 'the owner failed to run the request' };
            }
          }
          state.pending -= 1;
          state.lastActive = performance.now();
          answer(number, signature, 200, encodeWire(result));
        })();
      }
    });
  });
  server.on('sessionError', () => {});
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // The channels stay open otherwise (a node closes after handing its markets over, so no
        // answer is due on them); the other nodes open new ones to the next owners.
        for (const channel of channels) channel.end();
        for (const session of sessions.keys()) shut(session);
        setTimeout(resolve, CLOSE_GRACE_MS).unref();
      }),
  };
}
