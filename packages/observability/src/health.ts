import type { FastifyInstance } from 'fastify';

/** One dependency the service needs to serve: answers (resolves) or not (throws). */
export type ReadinessCheck = () => Promise<unknown>;

export interface ReadinessReport {
  readonly status: 'ready' | 'unavailable';
  /** Each named dependency: `ok`, or `failed` (the reason is logged, never sent: it may be internal). */
  readonly checks: Record<string, 'ok' | 'failed'>;
}

/** A check that has not answered after this long counts as failed (an orchestrator's probe waits less). */
const CHECK_TIMEOUT_MS = 2000;

function withTimeout(check: ReadinessCheck): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
    timer.unref();
  });
  return Promise.race([check(), timeout]).finally(() => clearTimeout(timer));
}

/** Runs every check in parallel: ready only when all answer. */
export async function checkReadiness(
  checks: Readonly<Record<string, ReadinessCheck>>,
  onFailure?: (name: string, error: unknown) => void,
): Promise<ReadinessReport> {
  const names = Object.keys(checks);
  const outcomes = await Promise.allSettled(names.map((name) => withTimeout(checks[name] as ReadinessCheck)));
  const report: Record<string, 'ok' | 'failed'> = {};
  let ready = true;
  outcomes.forEach((outcome, i) => {
    const name = names[i] as string;
    if (outcome.status === 'fulfilled') {
      report[name] = 'ok';
    } else {
      ready = false;
      report[name] = 'failed';
      onFailure?.(name, outcome.reason);
    }
  });
  return { status: ready ? 'ready' : 'unavailable', checks: report };
}

const liveSchema = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['ok'] } },
  required: ['status'],
  additionalProperties: false,
} as const;
const readySchema = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ready', 'unavailable'] },
    checks: { type: 'object', additionalProperties: { type: 'string', enum: ['ok', 'failed'] } },
  },
  required: ['status', 'checks'],
  additionalProperties: false,
} as const;

/**
 * `GET /health/live` (200 while the process serves HTTP: restart it when this fails) and
 * `GET /health/ready` (200 when every check answers, 503 otherwise: send it no traffic), the shape
 * orchestrators' probes expect. The service's existing `/health` stays as it is.
 */
export function registerHealthRoutes(
  app: FastifyInstance,
  checks: Readonly<Record<string, ReadinessCheck>>,
): void {
  app.get(
    '/health/live',
    { schema: { tags: ['service'], summary: 'Liveness probe', response: { 200: liveSchema } } },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/health/ready',
    {
      schema: {
        tags: ['service'],
        summary: 'Readiness probe: 200 when the dependencies answer, 503 otherwise',
        response: { 200: readySchema, 503: readySchema },
      },
    },
    async (request, reply) => {
      const report = await checkReadiness(checks, (name, error) =>
        request.log.warn({ err: error, check: name }, 'readiness check failed'),
      );
      return reply.status(report.status === 'ready' ? 200 : 503).send(report);
    },
  );
}
