import { Agent } from 'undici';

/** One callback request: the exact bytes to send and the headers that sign them. */
export interface CallbackRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Time allowed for the whole request, answer included. */
  readonly timeoutMs: number;
}

/** What became of a request: the receiver's status, or why there was none (`ECONNREFUSED`, `TimeoutError`...). */
export type CallbackAnswer = { readonly status: number } | { readonly error: string };

/** How callbacks leave the gateway (a test can give its own). */
export interface CallbackTransport {
  post(request: CallbackRequest): Promise<CallbackAnswer>;
  close(): Promise<void>;
}

/**
 * Callbacks over undici's Agent (one connection pool per origin) instead of the global `fetch`:
 * the profile of the callback bench (README, "Bench") showed the WHATWG layer (Request and Headers
 * objects, the body turned into a ReadableStream, the answer read through another) costing more CPU
 * than the rest of a delivery. Connections are kept alive and reused, up to `connectionsPerOrigin`
 * at once per receiver (the dispatcher's concurrency, so no request waits for a socket), and never
 * pipelined: a callback is a non-idempotent POST, and a receiver closing a connection with several
 * requests on it would leave us not knowing which of them it processed.
 *
 * Redirects are not followed (a 3xx is a failed attempt, as with `redirect: 'manual'` before). The
 * answer's body is read and dropped so that its connection can serve the next callback.
 */
export class UndiciCallbackTransport implements CallbackTransport {
  readonly #agent: Agent;
  /** Parsed callback URLs: a merchant has one, and parsing it per callback showed in the profile. */
  readonly #targets = new Map<string, { origin: string; path: string }>();

  constructor(connectionsPerOrigin: number) {
    this.#agent = new Agent({
      connections: connectionsPerOrigin,
      pipelining: 1,
      // Node's and most servers' keep-alive is 5 s: close ours before theirs to avoid sending on a
      // socket the receiver is closing (the request would fail and count as an attempt).
      keepAliveTimeout: 4_000,
      keepAliveMaxTimeout: 4_000,
    });
  }

  #target(url: string): { origin: string; path: string } {
    let target = this.#targets.get(url);
    if (!target) {
      const parsed = new URL(url);
      target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
      this.#targets.set(url, target);
    }
    return target;
  }

  async post(request: CallbackRequest): Promise<CallbackAnswer> {
    const { origin, path } = this.#target(request.url);
    try {
      const response = await this.#agent.request({
        origin,
        path,
        method: 'POST',
        headers: request.headers,
        body: request.body,
        // One timer for the whole request (headers and body), as fetch's AbortSignal.timeout was.
        signal: AbortSignal.timeout(request.timeoutMs),
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      await response.body.dump({ limit: 65_536 }).catch(() => undefined);
      return { status: response.statusCode };
    } catch (error) {
      return { error: errorCode(error) };
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

/** The short reason kept in `last_error`: the system's code (`ECONNREFUSED`) or the error's name (`TimeoutError`). */
function errorCode(error: unknown): string {
  if (typeof error !== 'object' || error === null) return 'Error';
  const { code, name, cause } = error as { code?: unknown; name?: unknown; cause?: unknown };
  // An aborted request carries the signal's reason (a TimeoutError) as its cause or as itself.
  if (cause instanceof Error && cause.name === 'TimeoutError') return 'TimeoutError';
  if (name === 'TimeoutError') return 'TimeoutError';
  if (typeof code === 'string' && !code.startsWith('UND_ERR_')) return code;
  return typeof name === 'string' ? name : 'Error';
}
