import net from 'node:net';
import tls from 'node:tls';

/**
 * One connection speaking memcached's text protocol, one command at a time (the pool in
 * memcached-pool.ts hands a connection to one caller at a time). The text protocol is used because
 * it has the multi-get the reference reads with (`get k1 k2 ...`, one round trip per node).
 */
export interface WireTarget {
  host: string;
  port: number;
  /** TLS options when MEMSTORE_TLS is on. */
  tls: tls.ConnectionOptions | undefined;
}

export class MemcachedProtocolError extends Error {}

/** Parses one complete response from the front of `buf`; undefined while more bytes are needed. */
type Parser<T> = (buf: Buffer) => { value: T; consumed: number } | undefined;

const CRLF = '\r\n';

function firstLine(buf: Buffer, from = 0): { line: string; next: number } | undefined {
  const end = buf.indexOf(CRLF, from);
  if (end < 0) return undefined;
  return { line: buf.toString('utf8', from, end), next: end + 2 };
}

function failIfError(line: string): void {
  if (line === 'ERROR' || line.startsWith('CLIENT_ERROR') || line.startsWith('SERVER_ERROR')) {
    throw new MemcachedProtocolError(`memcached: ${line}`);
  }
}

/** Response of `get k1 k2 ...`: the values found, by key. */
export const parseValues: Parser<Map<string, Buffer>> = (buf) => {
  const values = new Map<string, Buffer>();
  let pos = 0;
  for (;;) {
    const l = firstLine(buf, pos);
    if (!l) return undefined;
    failIfError(l.line);
    if (l.line === 'END') return { value: values, consumed: l.next };
    const [word, key, , bytes] = l.line.split(' ');
    if (word !== 'VALUE' || key === undefined || bytes === undefined) {
      throw new MemcachedProtocolError(`memcached: unexpected reply '${l.line}'`);
    }
    const size = Number(bytes);
    if (buf.length < l.next + size + 2) return undefined;
    values.set(key, buf.subarray(l.next, l.next + size));
    pos = l.next + size + 2;
  }
};

/** Any one-line response (`STORED`, `NOT_FOUND`, a number, `VERSION ...`). */
export const parseLine: Parser<string> = (buf) => {
  const l = firstLine(buf);
  if (!l) return undefined;
  failIfError(l.line);
  return { value: l.line, consumed: l.next };
};

interface Pending {
  parse: Parser<unknown>;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export class WireConnection {
  private readonly socket: net.Socket;
  private buffer: Buffer = Buffer.alloc(0);
  private pending: Pending | undefined;
  broken = false;

  constructor(
    target: WireTarget,
    private readonly timeoutMs: number,
  ) {
    this.socket = target.tls
      ? tls.connect({ ...target.tls, host: target.host, port: target.port })
      : net.connect({ host: target.host, port: target.port });
    this.socket.setNoDelay(true);
    this.socket.setKeepAlive(true);
    this.socket.on('data', (chunk) => this.onData(chunk));
    this.socket.on('error', (error) => this.fail(error));
    this.socket.on('close', () => this.fail(new Error('memcached connection closed')));
    this.socket.on('timeout', () => {
      this.fail(new Error(`memcached: no reply within ${this.timeoutMs} ms`));
    });
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const p = this.pending;
    if (!p) return;
    try {
      const parsed = p.parse(this.buffer);
      if (!parsed) return;
      this.buffer = this.buffer.subarray(parsed.consumed);
      this.pending = undefined;
      this.socket.setTimeout(0);
      p.resolve(parsed.value);
    } catch (error) {
      this.fail(error as Error);
    }
  }

  private fail(error: Error): void {
    this.broken = true;
    const p = this.pending;
    this.pending = undefined;
    if (!this.socket.destroyed) this.socket.destroy();
    p?.reject(error);
  }

  /** Sends one command and waits (at most timeoutMs, connect included) for its parsed reply. */
  async send<T>(command: string | Buffer, parse: Parser<T>): Promise<T> {
    if (this.broken) throw new Error('memcached connection is broken');
    this.socket.setTimeout(this.timeoutMs);
    const reply = new Promise<T>((resolve, reject) => {
      this.pending = { parse, resolve: resolve as (v: unknown) => void, reject };
    });
    this.socket.write(command);
    return reply;
  }

  close(): void {
    this.broken = true;
    this.socket.end();
    this.socket.destroy();
  }
}
