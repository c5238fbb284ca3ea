/**
 * Spans no official instrumentation makes (issue 30): the exchange's gRPC call to services/ratelimit
 * carries W3C trace context, so the rate limiter's span is the child of the exchange's CLIENT span;
 * statements of the embedded PGlite are CLIENT spans of the operation that runs them. Tracing is
 * started in this test process with the standard OTEL_* settings pointing at an OTLP/HTTP receiver
 * the test serves; the rate limiter is a real process exporting to the same receiver.
 */
import { randomUUID } from 'node:crypto';
import { inSpan, withDatabaseSpans } from '@platform/observability/client-spans';
import { startTracing, type TracingHandle } from '@platform/observability/tracing';
import type { Database } from '@platform/sql-storage/database';
import { openPglite } from '@platform/sql-storage/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcLimiter } from '../../src/limits/grpc-limiter.js';
import { ratelimitConfigYaml } from '../../src/limits/ratelimit-config.js';
import { CONTRACT_LIMITS } from '../limits/limiter.contract.js';
import { type RatelimitProcess, startRatelimit } from '../limits/ratelimit-process.js';
import { type ReceivedSpan, startOtlpReceiver } from './otlp-receiver.js';

/** OTLP's SpanKind: 3 is CLIENT, 2 SERVER. */
const CLIENT = 3;
const SERVER = 2;

let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
let tracing: TracingHandle;
let ratelimit: RatelimitProcess | undefined;
let limiter: GrpcLimiter | undefined;
let db: Database | undefined;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
  // The SDK's exporter reads its settings from the process's environment, as in a service.
  Object.assign(process.env, otel);
  tracing = startTracing('exchange', process.env);
  // One after the other: PGlite's migrations hold this thread, which reads the process's log.
  ratelimit = await startRatelimit(ratelimitConfigYaml(CONTRACT_LIMITS, 'the contract rules'), {
    TRACING_ENABLED: 'true',
    ...otel,
  });
  // PGlite without the exchange's schema (its migrations take half a minute here), wrapped as
  // src/db/open.ts wraps the exchange's.
  db = withDatabaseSpans('exchange', await openPglite(undefined));
  limiter = new GrpcLimiter({ target: ratelimit.grpc, domain: CONTRACT_LIMITS.domain, timeoutMs: 5_000 });
}, 120_000);

afterAll(async () => {
  await limiter?.close();
  await ratelimit?.stop();
  await db?.close();
  await tracing?.shutdown();
  await receiver?.close();
});

async function eventually<T>(what: string, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    await tracing.forceFlush();
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const named = (name: string, traceId?: string) => (span: ReceivedSpan) =>
  span.name === name && (traceId === undefined || span.traceId === traceId);

describe('spans without an official instrumentation', () => {
  it("the gRPC call to services/ratelimit is a CLIENT span, parent of the rate limiter's own", async () => {
    const rule = CONTRACT_LIMITS.rules.find((r) => r.name === 'per-key');
    if (!rule || !limiter) throw new Error('set-up');
    const outcome = await inSpan('a traced request', () =>
      (limiter as GrpcLimiter).check([{ rule, subject: randomUUID() }]),
    );
    expect(outcome.kind).toBe('decided');
    const root = await eventually('the request span', () => receiver.spans.find(named('a traced request')));
    const client = await eventually('the gRPC client span', () =>
      receiver.spans.find(named('envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit', root.traceId)),
    );
    expect(client).toMatchObject({ service: 'exchange', kind: CLIENT, parentSpanId: root.spanId });
    expect(client.attributes).toContain('"rpc.system"');
    // services/ratelimit exports every 5 s: its span, a child of the exchange's, through the metadata.
    const server = await eventually("the rate limiter's span", () =>
      receiver.spans.find(named('ShouldRateLimit', root.traceId)),
    );
    expect(server).toMatchObject({ kind: SERVER, parentSpanId: client.spanId });
    expect(server.service).not.toBe('exchange');
  }, 60_000);

  it('PGlite statements are CLIENT spans of the operation, in and out of transactions; none outside a trace', async () => {
    if (!db) throw new Error('set-up');
    const store = db;
    await store.query('SELECT 41 AS untraced');
    await inSpan('a traced operation', async () => {
      await store.query('SELECT count(*) FROM pg_class');
      await store.transaction((tx) => tx.query('SELECT 1 AS inside'));
    });
    const root = await eventually('the operation span', () =>
      receiver.spans.find(named('a traced operation')),
    );
    const statements = receiver.spans.filter(
      (span) => span.traceId === root.traceId && span.name.startsWith('pglite.query:'),
    );
    expect(statements.map((span) => span.name)).toEqual(
      expect.arrayContaining(['pglite.query:SELECT exchange']),
    );
    for (const span of statements) expect(span).toMatchObject({ kind: CLIENT, parentSpanId: root.spanId });
    const texts = statements.map((span) => span.attributes).join('\n');
    expect(texts).toContain('SELECT count(*) FROM pg_class');
    expect(texts).toContain('SELECT 1 AS inside');
    expect(receiver.spans.some((span) => span.attributes.includes('untraced'))).toBe(false);
  }, 60_000);
});
