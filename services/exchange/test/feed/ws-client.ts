import { type ClientOptions, WebSocket } from 'ws';
import { clientSignV3, nextNonce } from '../support/signing.js';

/** A frame the feed sent, parsed. */
export type Frame = Record<string, unknown> & { event: string };

/**
 * A real WebSocket client of the feed for tests: records every frame and the close, and waits on
 * them with a deadline (no sleeps).
 */
export class FeedClient {
  readonly frames: Frame[] = [];
  closed: { code: number; reason: string } | undefined;
  private readonly waiters = new Set<() => void>();
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.frames.push(JSON.parse(data.toString()) as Frame);
      this.notify();
    });
    socket.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.notify();
    });
    socket.on('error', () => {});
  }

  /** `options.localAddress` connects from another loopback address (per-address limits). */
  static async open(url: string, options?: ClientOptions): Promise<FeedClient> {
    const socket = new WebSocket(url, options);
    const client = new FeedClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('unexpected-response', (_request, response) =>
        reject(new Error(`upgrade refused: ${response.statusCode}`)),
      );
      socket.once('error', reject);
    });
    return client;
  }

  private notify(): void {
    for (const waiter of this.waiters) waiter();
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Resolves with the first frame (from index `from`) that matches, or fails after `timeoutMs`. */
  async next(match: (frame: Frame) => boolean, from = 0, timeoutMs = 10_000): Promise<Frame> {
    return this.until(() => this.frames.slice(from).find(match), timeoutMs, 'frame');
  }

  /** Resolves once the connection closed. */
  async whenClosed(timeoutMs = 10_000): Promise<{ code: number; reason: string }> {
    return this.until(() => this.closed, timeoutMs, 'close');
  }

  /** Sends a frame and waits for the answer carrying the same id. */
  async request(frame: Record<string, unknown> & { id: number }): Promise<Frame> {
    const from = this.frames.length;
    this.send(frame);
    return this.next((f) => f.id === frame.id, from);
  }

  async until<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    const found = probe();
    if (found !== undefined) return found;
    return new Promise<T>((resolve, reject) => {
      const check = () => {
        const value = probe();
        if (value === undefined) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(value);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(
          new Error(`no ${what} within ${timeoutMs} ms; frames: ${JSON.stringify(this.frames.slice(-5))}`),
        );
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  /** Sends `auth` signed with the key like a v3 request (`/v3/ws`, body `{}`); fails unless `authenticated`. */
  async authenticate(apiKey: string, secret: string): Promise<void> {
    const nonce = nextNonce();
    const answer = await this.request({
      op: 'auth',
      id: 0,
      key: apiKey,
      nonce,
      signature: clientSignV3(secret, '/v3/ws', nonce, '{}'),
    });
    if (answer.event !== 'authenticated') throw new Error(`auth refused: ${JSON.stringify(answer)}`);
  }

  close(): void {
    this.socket.close();
  }
}

/** Polls `probe` every 10 ms until it holds, failing after `timeoutMs` (for state no frame announces). */
export async function pollUntil(probe: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
