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
        const settle = (outcome: UpstreamOutcome) => {
          if (settled) return;
          settled = true;
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
            settle({ kind: 'answered', status, text, body: body as GraphQLResponseBody });
          });
        });
        req.setTimeout(timeoutMs, () => {
          req.destroy(new Error(`upstream did not answer within ${timeoutMs} ms`));
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

/** Remembers whether the upstream answered last time, and tells listeners when it comes back. */
export class UpstreamMonitor {
  private current: UpstreamState = 'unknown';
  private lastError: string | undefined;
  private readonly listeners: Array<() => void> = [];

  get state(): UpstreamState {
    return this.current;
  }

  get lastFailure(): string | undefined {
    return this.lastError;
  }

  onOnline(listener: () => void): void {
    this.listeners.push(listener);
  }

  record(outcome: UpstreamOutcome): void {
    if (outcome.kind === 'unavailable') {
      this.current = 'offline';
      this.lastError = outcome.reason;
      return;
    }
    const wasOnline = this.current === 'online';
    this.current = 'online';
    if (!wasOnline) for (const listener of this.listeners) listener();
  }
}
