import { readFileSync } from 'node:fs';
import type { SecureServerOptions } from 'node:http2';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { ServerCredentials } from '@grpc/grpc-js';

/**
 * gRPC server credentials whose certificate chain, key and client CA are files re-read every
 * `refreshIntervalMs`. Unlike grpc-js's experimental file-watcher provider, the first read is
 * synchronous (a missing file fails at start-up naming its setting, and the very first connection
 * already gets TLS), and a changed set of files is only handed to the server once it forms a
 * valid TLS context, so a half-written swap (new certificate, old key) keeps the old context
 * instead of refusing connections.
 */
export interface WatchedFiles {
  /** `[setting name, path]` pairs, so errors name the setting. */
  readonly cert: readonly [string, string];
  readonly key: readonly [string, string];
  readonly clientCa?: readonly [string, string];
}

function read([setting, path]: readonly [string, string]): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new Error(`${setting}: cannot read ${path}: ${(error as Error).message}`);
  }
}

function load(files: WatchedFiles): SecureContextOptions {
  const options: SecureContextOptions = { cert: read(files.cert), key: read(files.key) };
  if (files.clientCa) options.ca = read(files.clientCa);
  return options;
}

function same(a: SecureContextOptions, b: SecureContextOptions): boolean {
  const eq = (x: unknown, y: unknown): boolean =>
    Buffer.isBuffer(x) && Buffer.isBuffer(y) ? x.equals(y) : x === y;
  return eq(a.cert, b.cert) && eq(a.key, b.key) && eq(a.ca, b.ca);
}

export class WatchedFileServerCredentials extends ServerCredentials {
  private current: SecureContextOptions;
  private timer: NodeJS.Timeout | undefined;
  private watching = 0;

  constructor(
    private readonly files: WatchedFiles,
    private readonly refreshIntervalMs: number,
  ) {
    const initial = load(files);
    try {
      createSecureContext(initial);
    } catch (error) {
      throw new Error(
        `${files.cert[0]}/${files.key[0]}: invalid certificate or key: ${(error as Error).message}`,
      );
    }
    const mutual = files.clientCa !== undefined;
    const serverOptions: SecureServerOptions = { requestCert: mutual, rejectUnauthorized: mutual };
    super(serverOptions, initial);
    this.current = initial;
  }

  /** Re-reads the files; hands a changed, valid set to the servers. Returns true when it changed. */
  refresh(): boolean {
    let next: SecureContextOptions;
    try {
      next = load(this.files);
      if (same(next, this.current)) return false;
      createSecureContext(next);
    } catch {
      // Mid-swap or unreadable: keep serving the previous certificate and look again next time.
      return false;
    }
    this.current = next;
    this.updateSecureContextOptions(next);
    return true;
  }

  override _addWatcher(watcher: Parameters<ServerCredentials['_addWatcher']>[0]): void {
    super._addWatcher(watcher);
    this.watching += 1;
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.refresh(), this.refreshIntervalMs);
      this.timer.unref();
    }
  }

  override _removeWatcher(watcher: Parameters<ServerCredentials['_removeWatcher']>[0]): void {
    super._removeWatcher(watcher);
    this.watching = Math.max(0, this.watching - 1);
    if (this.watching === 0 && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  _equals(other: ServerCredentials): boolean {
    return other === this;
  }
}
