/**
 * A client of the Bitcoin Core JSON-RPC (bitcoind, litecoind and their forks): HTTP POST of
 * `{"jsonrpc": "1.0", id, method, params}` with basic auth (from the URL or a cookie file), a wallet
 * addressed as `/wallet/<name>`.
 */
import { readFileSync } from 'node:fs';

/** An error answered by the node (it understood the call and refused it). */
export class RpcError extends Error {
  readonly code: number;
  constructor(method: string, code: number, message: string) {
    super(`${method}: ${message} (${code})`);
    this.name = 'RpcError';
    this.code = code;
  }
}

export interface RpcOptions {
  /** `http://user:password@host:port` (the credentials may come from `cookieFile` instead). */
  readonly url: string;
  /** `<datadir>/.cookie` of the node: `__cookie__:<password>`. */
  readonly cookieFile?: string | undefined;
  /** @default 20000 */
  readonly timeoutMs?: number;
}

export class RpcClient {
  private readonly base: URL;
  private readonly options: RpcOptions;
  private id = 0;

  constructor(options: RpcOptions) {
    this.options = options;
    this.base = new URL(options.url);
  }

  private authorization(): string {
    if (this.options.cookieFile) {
      return `Basic ${Buffer.from(readFileSync(this.options.cookieFile, 'utf8').trim()).toString('base64')}`;
    }
    const user = decodeURIComponent(this.base.username);
    const password = decodeURIComponent(this.base.password);
    return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  }

  /** Calls `method`; with `wallet`, on `/wallet/<wallet>`. Node refusals throw RpcError. */
  async call<T>(method: string, params: readonly unknown[] = [], wallet?: string): Promise<T> {
    const url = new URL(this.base.origin);
    url.pathname = wallet === undefined ? '/' : `/wallet/${encodeURIComponent(wallet)}`;
    this.id += 1;
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: this.authorization() },
      body: JSON.stringify({ jsonrpc: '1.0', id: this.id, method, params }),
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 20_000),
    });
    const text = await response.text();
    let answer: { result?: T; error?: { code: number; message: string } | null };
    try {
      answer = JSON.parse(text);
    } catch {
      throw new Error(`${method}: HTTP ${response.status} from the node: ${text.slice(0, 200)}`);
    }
    if (answer.error) throw new RpcError(method, answer.error.code, answer.error.message);
    return answer.result as T;
  }
}

/**
 * A coin amount of the RPC (a JSON number in whole coins with at most 8 decimals) as decimal text.
 * The shortest decimal form of such a double is its 8-decimal text; small ones print as `1e-7`.
 */
export function coinText(value: number): string {
  const text = String(Math.abs(value));
  const plain = /e/i.test(text)
    ? Math.abs(value)
        .toFixed(8)
        .replace(/\.?0+$/, '')
    : text;
  return plain;
}
