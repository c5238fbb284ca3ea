import * as grpc from '@grpc/grpc-js';
import { RLQS_METHOD_PATH, UsageReportsType } from '../src/rlqs/protos.js';

/**
 * The bench's RLQS client: streams that send usage reports encoded once beforehand (protobufjs,
 * from Envoy's protos) and keep each answer as its bytes, with its arrival time. The test client
 * (test/rlqs/rlqs-client.ts) encodes every report and decodes every answer with proto-loader: with
 * 1,000 streams in the bench's process that cost more CPU than the server under test (the
 * anchor's own p99 was near a second on this machine), so the bench measured its client.
 */
export interface RawUsage {
  readonly bucket: Readonly<Record<string, string>>;
  readonly allowed?: number;
  readonly denied?: number;
  readonly elapsedSeconds?: number;
}

/** A RateLimitQuotaUsageReports, encoded. */
export function encodeReport(domain: string, usages: readonly RawUsage[]): Buffer {
  const bytes = UsageReportsType.encode({
    domain,
    bucket_quota_usages: usages.map((u) => ({
      bucket_id: { bucket: u.bucket },
      time_elapsed: { seconds: u.elapsedSeconds ?? 0 },
      num_requests_allowed: u.allowed ?? 0,
      num_requests_denied: u.denied ?? 0,
    })),
  }).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The number of `bucket_action` fields (1, length-delimited) of an encoded RateLimitQuotaResponse. */
export function countActions(bytes: Buffer): number {
  let n = 0;
  let i = 0;
  while (i < bytes.length) {
    const tag = bytes[i++]!;
    let len = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[i++]!;
      len += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (b < 0x80) break;
    }
    if (tag === 0x0a) n++;
    i += len;
  }
  return n;
}

export class RawStream {
  readonly arrivals: number[] = [];
  readonly responses: Buffer[] = [];
  private readonly waiters: (() => void)[] = [];
  private readonly call: grpc.ClientDuplexStream<Buffer, Buffer>;
  private status: grpc.StatusObject | undefined;
  /** Called with each response and its arrival time. */
  onResponse: ((bytes: Buffer, at: number) => void) | undefined;

  constructor(client: grpc.Client, keep: boolean) {
    this.call = client.makeBidiStreamRequest(
      RLQS_METHOD_PATH,
      (b: Buffer) => b,
      (b: Buffer) => b,
    );
    this.call.on('data', (r: Buffer) => {
      const at = performance.now();
      this.arrivals.push(at);
      if (keep) this.responses.push(r);
      this.onResponse?.(r, at);
      for (const w of this.waiters.splice(0)) w();
    });
    this.call.on('status', (s: grpc.StatusObject) => {
      this.status = s;
      for (const w of this.waiters.splice(0)) w();
    });
    this.call.on('error', () => {});
  }

  send(report: Buffer): void {
    this.call.write(report);
  }

  /** Sends `report` and waits (at most `timeoutMs`) for the next response. */
  async exchange(report: Buffer, timeoutMs = 30_000): Promise<Buffer> {
    const count = this.arrivals.length + 1;
    this.send(report);
    const deadline = Date.now() + timeoutMs;
    while (this.arrivals.length < count) {
      if (this.status) throw new Error(`stream ended: ${this.status.code} ${this.status.details}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no response within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.responses[count - 1] ?? Buffer.alloc(0);
  }

  cancel(): void {
    this.call.cancel();
  }

  close(): void {
    this.call.end();
  }
}

export class RawClient {
  private readonly client: grpc.Client;

  constructor(address: string, options: grpc.ChannelOptions = {}) {
    this.client = new grpc.Client(address, grpc.credentials.createInsecure(), options);
  }

  /** `keep`: hold each response's bytes (not only its arrival time). */
  stream(keep = false): RawStream {
    return new RawStream(this.client, keep);
  }

  close(): void {
    this.client.close();
  }
}
