import http from 'node:http';
import https from 'node:https';

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

export function createUpstreamClient(endpoint: string, timeoutMs: number): UpstreamClient {
  const url = new URL(endpoint);
  const transport = url.protocol === 'https:' ? https : http;
  const agent = new transport.Agent({ keepAlive: true, maxSockets: 64, keepAliveMsecs: 10_000 });
  return {
    post(request) {
      return new Promise((resolve) => {
        let settled = false;
        // The timeout covers the whole call from here: waiting for a free socket of the agent,
        // connecting, and reading the answer (a socket idle timeout would start only once a socket
        // is assigned, so calls queued behind hanging ones would wait several timeouts).
        const timer = setTimeout(() => {
          settle({ kind: 'unavailable', reason: `upstream did not answer within ${timeoutMs} ms` });
          req.destroy();
        }, timeoutMs);
        const settle = (outcome: UpstreamOutcome) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(outcome);
        };
        const headers: Record<string, string | number> = {
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': Buffer.byteLength(request.body),
        };
        if (request.authorization) headers['authorization'] = request.authorization;
        if (request.idempotencyKey) headers['idempotency-key'] = request.idempotencyKey;
        const req = transport.request(url, { method: 'POST', agent, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', (error) => settle({ kind: 'unavailable', reason: error.message }));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            const text = Buffer.concat(chunks).toString('utf8');
            if (UNAVAILABLE_STATUSES.has(status)) {
              settle({ kind: 'unavailable', reason: `upstream answered HTTP ${status}` });
              return;
            }
            let body: unknown;
            try {
              body = JSON.parse(text);
            } catch {
              settle({ kind: 'unavailable', reason: `upstream answered HTTP ${status} without a JSON body` });
              return;
            }
            if (body === null || typeof body !== 'object' || Array.isArray(body)) {
              settle({
                kind: 'unavailable',
                reason: `upstream answered HTTP ${status} without a GraphQL body`,
              });
              return;
            }
            const cacheControl = res.headers['cache-control'];
            settle({ kind: 'answered', status, text, body: body as GraphQLResponseBody, cacheControl });
          });
        });
        req.on('error', (error) => settle({ kind: 'unavailable', reason: error.message }));
        req.end(request.body);
      });
    },
    close() {
      agent.destroy();
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
