import type { Dispatcher } from 'undici';
import { Pool } from 'undici';

/**
 * Talks to the upstream GraphQL endpoint over keep-alive connections. Every failure to get a usable
 * GraphQL answer (connection refused, timeout, 502/503/504, a body that is not JSON) is the value
 * `unavailable`, which the proxy treats as "offline"; any JSON answer is `answered`.
 */

export interface GraphQLResponseBody {
  data?: unknown;
  errors?: Array<{ message?: string; extensions?: { code?: string } }>;
  extensions?: unknown;
}

export type UpstreamOutcome =
  | {
      readonly kind: 'answered';
      readonly status: number;
      readonly text: string;
      readonly body: GraphQLResponseBody;
      /** The upstream's Cache-Control header, honoured by the cache. */
      readonly cacheControl?: string | undefined;
    }
  | { readonly kind: 'unavailable'; readonly reason: string };

export interface UpstreamRequest {
  readonly body: string;
  readonly authorization?: string | undefined;
  readonly idempotencyKey?: string | undefined;
}

export interface UpstreamClient {
  post(request: UpstreamRequest): Promise<UpstreamOutcome>;
  close(): void;
}

const UNAVAILABLE_STATUSES = new Set([502, 503, 504]);

/** Connections kept to the upstream; more concurrent calls wait for one (inside the timeout). */
const MAX_CONNECTIONS = 64;

/** The outcome of a finished upstream exchange: a GraphQL answer, or why there is none. */
function outcomeOf(status: number, text: string, cacheControl: string | undefined): UpstreamOutcome {
  if (UNAVAILABLE_STATUSES.has(status)) {
    return { kind: 'unavailable', reason: `upstream answered HTTP ${status}` };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { kind: 'unavailable', reason: `upstream answered HTTP ${status} without a JSON body` };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { kind: 'unavailable', reason: `upstream answered HTTP ${status} without a GraphQL body` };
  }
  return { kind: 'answered', status, text, body: body as GraphQLResponseBody, cacheControl };
}

/**
 * One upstream call as an undici dispatch handler: it collects the answer and settles once, with a
 * timer that covers the whole call from its start: waiting for a free connection of the pool,
 * connecting, and reading the answer (a socket idle timeout would start only once a connection is
 * assigned, so calls queued behind hanging ones would wait several timeouts).
 *
 * undici's dispatch API rather than node:http's `request`: no `ClientRequest`/`IncomingMessage`
 * streams per call; it halved the client side of a miss (about 120 -> 50 us of CPU per call,
 * measured against a local upstream), a good part of what the proxy itself adds to a miss.
 */
class UpstreamCall implements Dispatcher.DispatchHandler {
  private readonly chunks: Buffer[] = [];
  private status = 0;
  private cacheControl: string | undefined;
  private settled = false;
  private controller: Dispatcher.DispatchController | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    timeoutMs: number,
    private readonly resolve: (outcome: UpstreamOutcome) => void,
  ) {
    this.timer = setTimeout(() => {
      this.settle({ kind: 'unavailable', reason: `upstream did not answer within ${timeoutMs} ms` });
      // Closes the connection of a call in progress; a call still waiting for a connection is
      // aborted when it gets one (onRequestStart), before anything is sent.
      this.controller?.abort(new Error('upstream timeout'));
    }, timeoutMs);
  }

  private settle(outcome: UpstreamOutcome): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(outcome);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.settled) controller.abort(new Error('upstream timeout'));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    this.status = statusCode;
    const cacheControl = headers['cache-control'];
    this.cacheControl = Array.isArray(cacheControl) ? cacheControl.join(', ') : cacheControl;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    const text =
      this.chunks.length === 1
        ? (this.chunks[0] as Buffer).toString('utf8')
        : Buffer.concat(this.chunks).toString('utf8');
    this.settle(outcomeOf(this.status, text, this.cacheControl));
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(error.message);
  }

  fail(reason: string): void {
    this.settle({ kind: 'unavailable', reason });
  }
}

export function createUpstreamClient(endpoint: string, timeoutMs: number): UpstreamClient {
  const url = new URL(endpoint);
  const pool = new Pool(url.origin, { connections: MAX_CONNECTIONS });
  const path = `${url.pathname}${url.search}`;
  // Credentials in the endpoint URL are sent as Basic auth unless the call has its own
  // Authorization, as node:http's request did with such a URL.
  const basic =
    url.username || url.password
      ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
      : undefined;
  return {
    post(request) {
      return new Promise((resolve) => {
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          accept: 'application/json',
        };
        const authorization = request.authorization || basic;
        if (authorization) headers['authorization'] = authorization;
        if (request.idempotencyKey) headers['idempotency-key'] = request.idempotencyKey;
        const call = new UpstreamCall(timeoutMs, resolve);
        try {
          pool.dispatch({ path, method: 'POST', headers, body: request.body }, call);
        } catch (error) {
          // A closed pool or invalid options throw at once instead of calling onResponseError.
          call.fail(error instanceof Error ? error.message : String(error));
        }
      });
    },
    close() {
      void pool.destroy();
    },
  };
}

export function hasErrors(body: GraphQLResponseBody): boolean {
  return Array.isArray(body.errors) && body.errors.length > 0;
}

export type UpstreamState = 'unknown' | 'online' | 'offline';
export type BreakerState = 'closed' | 'open';

/** The outcome given without calling the upstream while the circuit breaker is open. */
export const CIRCUIT_OPEN: UpstreamOutcome = {
  kind: 'unavailable',
  reason: 'circuit breaker open: the upstream is down, only the probe asks it',
};

/**
 * Remembers whether the upstream answered last time, tells listeners when it comes back, and is the
 * circuit breaker: after `failureThreshold` consecutive failures (refused, reset, timed out, 502-504)
 * the circuit opens, and requests are answered without calling the upstream (stale from the cache,
 * OFFLINE_CACHE_MISS, queued, or UPSTREAM_UNAVAILABLE) until a probe (or any call still in flight)
 * gets an answer. So only the probe waits on a dead upstream.
 */
export class UpstreamMonitor {
  private current: UpstreamState = 'unknown';
  private lastError: string | undefined;
  private failures = 0;
  private breaker: BreakerState = 'closed';
  private readonly listeners: Array<() => void> = [];
  private readonly breakerListeners: Array<(state: BreakerState) => void> = [];

  constructor(private readonly failureThreshold = 1) {}

  get state(): UpstreamState {
    return this.current;
  }

  get breakerState(): BreakerState {
    return this.breaker;
  }

  get lastFailure(): string | undefined {
    return this.lastError;
  }

  /** False while the breaker is open: callers answer without the upstream. Probes do not ask. */
  allows(): boolean {
    return this.breaker === 'closed';
  }

  onOnline(listener: () => void): void {
    this.listeners.push(listener);
  }

  onBreakerChange(listener: (state: BreakerState) => void): void {
    this.breakerListeners.push(listener);
  }

  private setBreaker(state: BreakerState): void {
    if (this.breaker === state) return;
    this.breaker = state;
    for (const listener of this.breakerListeners) listener(state);
  }

  record(outcome: UpstreamOutcome): void {
    if (outcome === CIRCUIT_OPEN) return;
    if (outcome.kind === 'unavailable') {
      this.current = 'offline';
      this.lastError = outcome.reason;
      this.failures += 1;
      if (this.failures >= this.failureThreshold) this.setBreaker('open');
      return;
    }
    this.failures = 0;
    this.setBreaker('closed');
    const wasOnline = this.current === 'online';
    this.current = 'online';
    if (!wasOnline) for (const listener of this.listeners) listener();
  }
}

/** Calls the upstream unless the breaker is open, and records the outcome. */
export function guardedPost(
  upstream: UpstreamClient,
  monitor: UpstreamMonitor,
  request: UpstreamRequest,
): Promise<UpstreamOutcome> {
  if (!monitor.allows()) return Promise.resolve(CIRCUIT_OPEN);
  return upstream.post(request).then((outcome) => {
    monitor.record(outcome);
    return outcome;
  });
}
