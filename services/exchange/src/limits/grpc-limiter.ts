import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { startClientSpan, type TraceContext, tracedContext } from '@platform/observability/client-spans';
import { RATELIMIT_PROTO_DIR, RLS_PROTO } from '@platform/ratelimit-proto/dir';
import type { RuleVerdict } from './fixed-window.js';
import type { LimitCheck, LimitOutcome, RequestLimiter } from './limiter.js';

/**
 * Decides through services/ratelimit (`envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit`).
 * Each check is one descriptor `[rule=<name>, address|key=<subject>]` in the limits file's domain; the
 * service's config for that domain (config/ratelimit/config/exchange.yaml, generated from the limits
 * file by ratelimit-config.ts) holds the numbers. The .proto files are services/ratelimit's, shared
 * through packages/ratelimit-proto.
 */

/** `RateLimitResponse.Code`. */
const OVER_LIMIT = 2;
/** Seconds of `RateLimitResponse.RateLimit.Unit` (UNKNOWN, SECOND, MINUTE, HOUR, DAY, MONTH, YEAR, WEEK). */
const UNIT_SECONDS: readonly number[] = [0, 1, 60, 3600, 86_400, 2_592_000, 31_536_000, 604_800];

/** The response as proto-loader decodes it (camelCase, enums and longs as numbers, defaults filled). */
interface DecodedResponse {
  overallCode: number;
  statuses: {
    code: number;
    currentLimit: { requestsPerUnit: number; unit: number } | null;
    limitRemaining: number;
    durationUntilReset: { seconds: number; nanos: number } | null;
  }[];
}

interface RequestMessage {
  domain: string;
  descriptors: { entries: { key: string; value: string }[] }[];
  hitsAddend: number;
}

type ShouldRateLimit = (
  request: RequestMessage,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response?: DecodedResponse) => void,
) => grpc.ClientUnaryCall;

function loadClientConstructor(): grpc.ServiceClientConstructor {
  const definition = loadSync(RLS_PROTO, {
    includeDirs: [RATELIMIT_PROTO_DIR],
    longs: Number,
    enums: Number,
    defaults: true,
    oneofs: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    envoy: { service: { ratelimit: { v3: { RateLimitService: grpc.ServiceClientConstructor } } } };
  };
  return loaded.envoy.service.ratelimit.v3.RateLimitService;
}

export interface GrpcLimiterOptions {
  /** gRPC target: `host:port`, `dns:///host:port` or `unix:/path` (`RATELIMIT_GRPC_URL`). */
  readonly target: string;
  /** The services/ratelimit domain of the rules (the limits file's `domain`). */
  readonly domain: string;
  /** Deadline of one call in ms (`RATELIMIT_TIMEOUT_MS`). */
  readonly timeoutMs: number;
}

function verdictOf(
  check: LimitCheck,
  status: DecodedResponse['statuses'][number] | undefined,
): RuleVerdict | undefined {
  const limit = status?.currentLimit;
  // No limit: the service's config has no rule for this descriptor (or an unlimited one).
  if (!status || !limit) return undefined;
  const reset = status.durationUntilReset;
  return {
    rule: check.rule,
    allowed: status.code !== OVER_LIMIT,
    limit: limit.requestsPerUnit,
    windowSeconds: UNIT_SECONDS[limit.unit] ?? 0,
    remaining: status.limitRemaining,
    resetSeconds: reset ? reset.seconds + (reset.nanos > 0 ? 1 : 0) : 0,
  };
}

/** Calls to the service at once; more checks wait and leave together in the next call. */
const MAX_CALLS_IN_FLIGHT = 4;
/** Most descriptors in one call. */
const MAX_DESCRIPTORS_PER_CALL = 256;

interface Pending {
  readonly checks: readonly LimitCheck[];
  readonly resolve: (outcome: LimitOutcome) => void;
  /** Date.now() by which this request must have its answer. */
  readonly deadline: number;
  /** The request's trace, when it is traced: the call's span is its child (or linked to it). */
  readonly trace: TraceContext | undefined;
}

/** The RPC's full name, and the span's (OpenTelemetry's gRPC conventions: `package.Service/Method`). */
const RPC_SERVICE = 'envoy.service.ratelimit.v3.RateLimitService';
const RPC_METHOD = 'ShouldRateLimit';

export class GrpcLimiter implements RequestLimiter {
  readonly description: string;
  private readonly queue: Pending[] = [];
  private inFlight = 0;
  private readonly client: grpc.Client;
  private readonly call: ShouldRateLimit;

  constructor(private readonly options: GrpcLimiterOptions) {
    const Client = loadClientConstructor();
    this.client = new Client(options.target, grpc.credentials.createInsecure(), {
      // After an outage, reconnect within 2 s of the service's return instead of grpc's 120 s backoff.
      'grpc.initial_reconnect_backoff_ms': 250,
      'grpc.max_reconnect_backoff_ms': 2_000,
    });
    const method = (this.client as unknown as { ShouldRateLimit: ShouldRateLimit }).ShouldRateLimit;
    this.call = method.bind(this.client);
    // Connect now, so the first requests do not pay the connection set-up inside their deadline.
    this.client.getChannel().getConnectivityState(true);
    this.description = `services/ratelimit at ${options.target} (domain ${options.domain})`;
  }

  check(checks: readonly LimitCheck[]): Promise<LimitOutcome> {
    if (checks.length === 0) return Promise.resolve({ kind: 'decided', verdicts: [] });
    return new Promise((resolve) => {
      this.queue.push({
        checks,
        resolve,
        deadline: Date.now() + this.options.timeoutMs,
        trace: tracedContext(),
      });
      if (this.inFlight < MAX_CALLS_IN_FLIGHT) this.send();
    });
  }

  /**
   * Sends the queued checks of several requests as one call (the protocol answers a status per
   * descriptor, so one call can carry many requests' checks), as group commit does: with a call
   * slot free a check goes at once; otherwise it waits for the next free slot and leaves with
   * everything queued meanwhile. The call's deadline is the earliest of its checks'.
   */
  private send(): void {
    if (this.queue.length === 0) return;
    const batch: Pending[] = [];
    let descriptors = 0;
    while (this.queue.length > 0) {
      const next = this.queue[0]!;
      if (batch.length > 0 && descriptors + next.checks.length > MAX_DESCRIPTORS_PER_CALL) break;
      batch.push(next);
      descriptors += next.checks.length;
      this.queue.shift();
    }
    const request: RequestMessage = {
      domain: this.options.domain,
      descriptors: batch.flatMap((pending) =>
        pending.checks.map((c) => ({
          entries: [
            { key: 'rule', value: c.rule.name },
            { key: c.rule.per, value: c.subject },
          ],
        })),
      ),
      hitsAddend: 1,
    };
    const deadline = Math.min(...batch.map((pending) => pending.deadline));
    this.inFlight += 1;
    // A CLIENT span when a request it carries is traced; its W3C traceparent goes in the metadata,
    // so services/ratelimit's span is the child of this one.
    const span = startClientSpan(
      `${RPC_SERVICE}/${RPC_METHOD}`,
      {
        'rpc.system': 'grpc',
        'rpc.service': RPC_SERVICE,
        'rpc.method': RPC_METHOD,
        'server.address': this.options.target,
      },
      batch.map((pending) => pending.trace),
    );
    const metadata = new grpc.Metadata();
    if (span) for (const [key, value] of Object.entries(span.carrier)) metadata.set(key, value);
    this.call(request, metadata, { deadline }, (error, response) => {
      this.inFlight -= 1;
      span?.end(error ?? undefined, { 'rpc.grpc.status_code': error?.code ?? grpc.status.OK });
      this.send();
      if (error || !response || response.overallCode === 0) {
        const failure: LimitOutcome = {
          kind: 'failed',
          reason:
            error?.code === grpc.status.DEADLINE_EXCEEDED
              ? 'timeout'
              : error?.code === grpc.status.UNAVAILABLE
                ? 'unavailable'
                : 'error',
          message: error ? error.details || error.message : 'the service answered UNKNOWN',
        };
        for (const pending of batch) pending.resolve(failure);
        return;
      }
      let at = 0;
      for (const pending of batch) {
        const verdicts = pending.checks.map((c, i) => verdictOf(c, response.statuses[at + i]));
        at += pending.checks.length;
        pending.resolve({ kind: 'decided', verdicts });
      }
    });
  }

  async close(): Promise<void> {
    this.client.close();
  }
}
