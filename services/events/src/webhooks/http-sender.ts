/**
 * One webhook attempt over HTTP(S): a POST with a whole-attempt timeout, redirects not followed
 * (a 3xx is an answer like any other non-2xx), the answer's body read and dropped (at most 64 KiB,
 * then the connection is closed rather than read on), connections kept alive between attempts.
 * Unless private targets are allowed, every address the host resolves to is checked when the
 * connection is made (the lookup that `net.connect` itself uses), so a name that resolves to a
 * private address is refused without a connection, even if it resolved elsewhere earlier.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { forbiddenAddress, hostOf } from './targets.js';

export interface DeliveryRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export type DeliveryOutcome =
  | { kind: 'answered'; status: number; retryAfter?: string }
  /** No HTTP answer: refused target, DNS, connection, TLS or timeout; `error` says which. */
  | { kind: 'failed'; error: string };

export interface HttpSender {
  send(request: DeliveryRequest): Promise<DeliveryOutcome>;
  close(): void;
}

export interface HttpSenderOptions {
  timeoutMs: number;
  allowPrivateTargets: boolean;
}

/** Answer bytes read before the connection is dropped instead. */
const MAX_ANSWER_BYTES = 64 * 1024;

class RefusedTarget extends Error {}

/** A `lookup` for `net.connect` that refuses private addresses (all of them checked, all or one asked). */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) {
      callback(error, '', 0);
      return;
    }
    for (const { address } of addresses) {
      const reason = forbiddenAddress(address);
      if (reason !== undefined) {
        callback(new RefusedTarget(`refused target: ${hostname} resolves to ${reason}`), '', 0);
        return;
      }
    }
    if (options.all) {
      (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
      return;
    }
    const first = addresses[0];
    if (first === undefined) callback(new Error(`${hostname} has no address`), '', 0);
    else callback(null, first.address, first.family);
  });
};

function describe(error: unknown): string {
  if (error instanceof RefusedTarget) return error.message;
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return (typeof code === 'string' ? `${code}: ${message}` : message).slice(0, 300);
}

export function createHttpSender(options: HttpSenderOptions): HttpSender {
  const agentOptions = { keepAlive: true, maxSockets: 64, maxFreeSockets: 64, scheduling: 'lifo' as const };
  const http = new HttpAgent(agentOptions);
  const https = new HttpsAgent(agentOptions);

  return {
    send(delivery) {
      return new Promise<DeliveryOutcome>((resolve) => {
        let settled = false;
        let timer: NodeJS.Timeout | undefined;
        const finish = (outcome: DeliveryOutcome): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(outcome);
        };
        const url = new URL(delivery.url);
        const host = hostOf(url);
        if (!options.allowPrivateTargets && isIP(host) !== 0) {
          const reason = forbiddenAddress(host);
          if (reason !== undefined) {
            finish({ kind: 'failed', error: `refused target: ${reason}` });
            return;
          }
        }
        const secure = url.protocol === 'https:';
        const body = Buffer.from(delivery.body, 'utf8');
        const request = (secure ? httpsRequest : httpRequest)(url, {
          method: 'POST',
          agent: secure ? https : http,
          headers: { ...delivery.headers, 'content-length': String(body.length) },
          ...(options.allowPrivateTargets ? {} : { lookup: guardedLookup }),
        });
        timer = setTimeout(() => {
          request.destroy(new Error(`timeout: no answer within ${options.timeoutMs} ms`));
        }, options.timeoutMs);
        request.on('error', (error) => finish({ kind: 'failed', error: describe(error) }));
        request.on('response', (response: IncomingMessage) => {
          let read = 0;
          response.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_ANSWER_BYTES) response.destroy();
          });
          const answered = (): void => {
            const retryAfter = response.headers['retry-after'];
            finish({
              kind: 'answered',
              status: response.statusCode ?? 0,
              ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
            });
          };
          response.on('end', answered);
          // The status is known: a body cut short (too long, or the receiver closing) is still an answer.
          response.on('close', answered);
          response.on('error', () => undefined);
        });
        request.end(body);
      });
    },
    close() {
      http.destroy();
      https.destroy();
    },
  };
}
