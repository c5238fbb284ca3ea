import type http2 from 'node:http2';
import { afterEach, describe, expect, it } from 'vitest';
import type { ForwardAnswer, ForwardedRequest } from '../../src/cluster/forward.js';
import { ForwardClient, ForwardFailed } from '../../src/cluster/forward-client.js';
import { startForwardServer } from '../../src/cluster/forward-server.js';
import { rawPeer } from './raw-peer.js';

// The first node sends a forwarded order again (to the owner or its successor) only when the owner
// surely did not run it (`ForwardFailed.maybeSent` false). A stream that ends without an answer after
// it reached the owner must count as "maybe run": the owner may have committed the order and recorded
// its nonce, and the second try would then be refused as a reused nonce (401 `nonce_reused` for a
// fresh tonce, seen once in the long fault run while owners were SIGKILLed) or, without a nonce, run
// the request twice. Node ends a client stream with 'end' and no 'error' both when the peer's session
// goes away (about a third of SIGKILLs of an owner here: FIN rather than RST) and when the stream
// times out (close with CANCEL).
const KEY = Buffer.alloc(32, 7);
const FORWARDED: ForwardedRequest = {
  market: 'btcuah',
  request: { type: 'limit', accountId: 1, side: 'buy', price: 1_500_000n, amount: 1n },
  nonce: { keyId: 1, protocol: 'v2', value: 1_800_000_000_000 },
};

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function client(timeoutMs?: number): ForwardClient {
  const forward = new ForwardClient(KEY, timeoutMs);
  cleanups.push(() => forward.close());
  return forward;
}

/** A raw HTTP/2 server on a free port: `onStream` when a stream opens, `onData` when a request arrives. */
function rawServer(handlers: {
  onStream?: (stream: http2.ServerHttp2Stream) => void;
  onData?: (stream: http2.ServerHttp2Stream) => void;
}): Promise<string> {
  return rawPeer((stream) => {
    handlers.onStream?.(stream);
    stream.on('data', () => handlers.onData?.(stream));
  }, cleanups);
}

/** A forward server on a free port running `entry`. */
async function owner(entry: Parameters<typeof startForwardServer>[0]['entry']): Promise<string> {
  const server = await startForwardServer({ host: '127.0.0.1', port: 0, key: KEY, entry, onError: () => {} });
  cleanups.push(() => server.close());
  return `http://127.0.0.1:${server.port}`;
}

async function failure(promise: Promise<ForwardAnswer>): Promise<ForwardFailed> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ForwardFailed);
  return error as ForwardFailed;
}

describe('forwarding: an answer that never came', () => {
  it('a session that goes away after the request arrived leaves the outcome unknown', async () => {
    let arrived = 0;
    const url = await rawServer({
      // It opens the channel as an owner does (requests are written only after its 200).
      onStream: (stream) => stream.respond({ ':status': 200 }),
      onData: (stream) => {
        arrived += 1;
        // What the first node sees when the owner dies with the order (a FIN, no RST_STREAM).
        stream.session?.destroy();
      },
    });
    const error = await failure(client().send(url, FORWARDED));
    expect(arrived).toBe(1);
    expect(error.maybeSent).toBe(true);
  });

  it('a forward that times out at an owner running it leaves the outcome unknown', async () => {
    let ran = 0;
    // The owner queued the order and its batch is slow to commit: it may still commit.
    const url = await owner(() => {
      ran += 1;
      return new Promise<ForwardAnswer>(() => {});
    });
    const error = await failure(client(200).send(url, FORWARDED));
    expect(ran).toBe(1);
    expect(error.maybeSent).toBe(true);
  });

  it('an owner that answered a status other than 200 did not run it: safe to send again', async () => {
    const url = await rawServer({
      onStream: (stream) => {
        stream.respond({ ':status': 404 });
        stream.end();
      },
    });
    const error = await failure(client().send(url, FORWARDED));
    expect(error.maybeSent).toBe(false);
  });

  it('a request signed with another key is not run: safe to send again', async () => {
    let ran = 0;
    const url = await owner(async () => {
      ran += 1;
      return { kind: 'not_owner' };
    });
    const stranger = new ForwardClient(Buffer.alloc(32, 8));
    cleanups.push(() => stranger.close());
    const error = await failure(stranger.send(url, FORWARDED));
    expect(error.maybeSent).toBe(false);
    expect(ran).toBe(0);
  });
});

describe('forwarding: the channel', () => {
  it('answers each request with its own outcome, in the order the owner finishes them', async () => {
    const finish: (() => void)[] = [];
    const url = await owner(
      (forwarded) =>
        new Promise<ForwardAnswer>((resolve) => {
          finish.push(() => resolve({ kind: 'error', message: `${forwarded.nonce?.value ?? 0}` }));
        }),
    );
    const forward = client();
    const sent = [1, 2, 3].map((value) =>
      forward.send(url, { ...FORWARDED, nonce: { keyId: 1, protocol: 'v3', value } }),
    );
    while (finish.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    for (const done of finish.reverse()) done();
    expect(await Promise.all(sent)).toEqual(
      [1, 2, 3].map((value) => ({ kind: 'error', message: `${value}` })),
    );
  });

  it('carries bigints both ways, request after request', async () => {
    const server = await startForwardServer({
      host: '127.0.0.1',
      port: 0,
      key: KEY,
      entry: async (forwarded) => {
        const request = forwarded.request;
        if (request.type !== 'limit') throw new Error('a limit order was sent');
        return {
          kind: 'outcome',
          consumed: true,
          outcome: { ok: false, code: 'INSUFFICIENT_FUNDS', message: `${request.price * 2n}` },
        };
      },
      onError: () => {},
    });
    cleanups.push(() => server.close());
    const forward = client();
    const url = `http://127.0.0.1:${server.port}`;
    for (let i = 0; i < 3; i += 1) {
      await expect(forward.send(url, FORWARDED)).resolves.toEqual({
        kind: 'outcome',
        consumed: true,
        outcome: { ok: false, code: 'INSUFFICIENT_FUNDS', message: '3000000' },
      });
    }
  });
});

describe('forwarding: an owner whose database went away under the order', () => {
  it('answers the outcome as unknown (503 at the first node), a bug in it as an error', async () => {
    // What pg raises when PostgreSQL is shut down or the connection is cut under a statement.
    const shutdown = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    });
    const lost = await owner(async () => {
      throw shutdown;
    });
    await expect(client().send(lost, FORWARDED)).resolves.toEqual({ kind: 'unknown' });
    const buggy = await owner(async () => {
      throw new TypeError('a bug');
    });
    await expect(client().send(buggy, FORWARDED)).resolves.toMatchObject({ kind: 'error' });
  });
});
