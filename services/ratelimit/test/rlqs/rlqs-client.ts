import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { RLQS_PROTO, RLQS_PROTO_DIR } from '@platform/ratelimit-proto/dir';

/**
 * An RLQS client built from Envoy's own protos with @grpc/proto-loader (not the server's
 * protobufjs code), for the tests and the bench: streams that send usage reports as Envoy does
 * and collect every answer and push.
 */
const definition = loadSync(RLQS_PROTO, {
  includeDirs: [RLQS_PROTO_DIR],
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: false,
  oneofs: true,
});

type ClientConstructor = new (
  address: string,
  credentials: grpc.ChannelCredentials,
) => grpc.Client & {
  StreamRateLimitQuotas(): grpc.ClientDuplexStream<WireReports, WireResponse>;
};
// biome-ignore lint/suspicious/noExplicitAny: proto-loader's package tree is untyped
const pkg = grpc.loadPackageDefinition(definition) as any;
const RateLimitQuotaService = pkg.envoy.service.rate_limit_quota.v3
  .RateLimitQuotaService as ClientConstructor;

export type Bucket = Record<string, string>;

export interface Usage {
  bucket: Bucket;
  allowed?: number;
  denied?: number;
  /** Whole seconds; Envoy's first report of a bucket says 0. @default 0 */
  elapsedSeconds?: number;
}

interface WireReports {
  domain: string;
  bucket_quota_usages: {
    bucket_id: { bucket: Bucket };
    time_elapsed: { seconds: number };
    num_requests_allowed: number;
    num_requests_denied: number;
  }[];
}

export interface WireTokenBucket {
  max_tokens?: number;
  tokens_per_fill?: { value?: number };
  fill_interval?: { seconds?: number; nanos?: number };
}

export interface WireAction {
  bucket_id: { bucket: Bucket };
  bucket_action: 'quota_assignment_action' | 'abandon_action';
  quota_assignment_action?: {
    assignment_time_to_live?: { seconds?: number; nanos?: number };
    rate_limit_strategy?: {
      strategy: 'blanket_rule' | 'token_bucket' | 'requests_per_time_unit';
      blanket_rule?: 'ALLOW_ALL' | 'DENY_ALL';
      token_bucket?: WireTokenBucket;
    };
  };
  abandon_action?: object;
}

export interface WireResponse {
  bucket_action: WireAction[];
}

/** What an action assigns, in short: `ALLOW_ALL`, `DENY_ALL`, `ABANDON`, or `TB <max_tokens>/<tokens_per_fill>/<fill s>`. */
export function describe(action: WireAction): string {
  if (action.bucket_action === 'abandon_action') return 'ABANDON';
  const s = action.quota_assignment_action?.rate_limit_strategy;
  if (s?.strategy === 'blanket_rule') return s.blanket_rule ?? 'ALLOW_ALL';
  const tb = s?.token_bucket;
  return `TB ${tb?.max_tokens}/${tb?.tokens_per_fill?.value}/${tb?.fill_interval?.seconds ?? 0}`;
}

export const sameBucket = (a: Bucket, b: Bucket): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

export class RlqsStream {
  readonly responses: WireResponse[] = [];
  /** When each response arrived (performance.now() ms), in order: the bench's latencies. */
  readonly arrivals: number[] = [];
  private readonly waiters: (() => void)[] = [];
  private readonly call: grpc.ClientDuplexStream<WireReports, WireResponse>;
  /** The status the stream ended with, once it has. */
  status: grpc.StatusObject | undefined;
  private readonly ended: Promise<grpc.StatusObject>;

  constructor(
    client: grpc.Client & {
      StreamRateLimitQuotas(): grpc.ClientDuplexStream<WireReports, WireResponse>;
    },
    readonly domain: string,
  ) {
    this.call = client.StreamRateLimitQuotas();
    this.call.on('data', (r: WireResponse) => {
      this.arrivals.push(performance.now());
      this.responses.push(r);
      for (const w of this.waiters.splice(0)) w();
    });
    this.ended = new Promise((resolve) => {
      this.call.on('status', (s: grpc.StatusObject) => {
        this.status = s;
        resolve(s);
        for (const w of this.waiters.splice(0)) w();
      });
    });
    this.call.on('error', () => {});
  }

  /** Sends one usage report. */
  report(usages: readonly Usage[]): void {
    this.call.write({
      domain: this.domain,
      bucket_quota_usages: usages.map((u) => ({
        bucket_id: { bucket: u.bucket },
        time_elapsed: { seconds: u.elapsedSeconds ?? 0 },
        num_requests_allowed: u.allowed ?? 0,
        num_requests_denied: u.denied ?? 0,
      })),
    });
  }

  /** Waits (at most `timeoutMs`) until `count` responses in all have arrived; returns the last one. */
  async response(count = this.responses.length + 1, timeoutMs = 5000): Promise<WireResponse> {
    const deadline = Date.now() + timeoutMs;
    while (this.responses.length < count) {
      if (this.status) throw new Error(`stream ended: ${this.status.code} ${this.status.details}`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`no response ${count} within ${timeoutMs} ms (have ${this.responses.length})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.responses[count - 1]!;
  }

  /** Sends a report and waits for the next response. */
  async exchange(usages: readonly Usage[]): Promise<WireResponse> {
    const count = this.responses.length + 1;
    this.report(usages);
    return this.response(count);
  }

  /** The last action received for `bucket`, described, or undefined. */
  latest(bucket: Bucket): string | undefined {
    for (let i = this.responses.length - 1; i >= 0; i--) {
      const action = this.responses[i]!.bucket_action.find((a) => sameBucket(a.bucket_id.bucket, bucket));
      if (action) return describe(action);
    }
    return undefined;
  }

  /** Waits until the last action for `bucket` is `expected`. */
  async until(bucket: Bucket, expected: string, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.latest(bucket) !== expected) {
      if (Date.now() > deadline)
        throw new Error(`bucket ${JSON.stringify(bucket)}: ${this.latest(bucket)}, expected ${expected}`);
      await this.response(this.responses.length + 1, Math.max(1, deadline - Date.now())).catch(
        () => undefined,
      );
    }
  }

  /** Half-closes and waits for the stream's status. */
  async close(): Promise<grpc.StatusObject> {
    this.call.end();
    return this.ended;
  }

  cancel(): void {
    this.call.cancel();
  }

  done(): Promise<grpc.StatusObject> {
    return this.ended;
  }
}

export class RlqsClient {
  private readonly client: InstanceType<ClientConstructor>;

  /** `options`: channel options, e.g. `grpc.use_local_subchannel_pool` for a connection of its own. */
  constructor(address: string, options: grpc.ChannelOptions = {}) {
    this.client = new (
      RateLimitQuotaService as unknown as new (
        address: string,
        credentials: grpc.ChannelCredentials,
        options: grpc.ChannelOptions,
      ) => InstanceType<ClientConstructor>
    )(address, grpc.credentials.createInsecure(), options);
  }

  stream(domain: string): RlqsStream {
    return new RlqsStream(this.client, domain);
  }

  close(): void {
    this.client.close();
  }
}
