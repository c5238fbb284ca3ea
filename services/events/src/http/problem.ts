/**
 * RFC 9457 problem details, sent instead of the NestJS shape when the client asks for
 * `application/problem+json`. The NestJS shape stays the default because the spec names it.
 */
import type { ErrorBody } from '../errors.js';

export interface ProblemDetails {
  type: 'about:blank';
  title: string;
  status: number;
  detail: string;
  /** The request path (RFC 9457 section 3.1.5); omitted when absurdly long. */
  instance?: string;
  /** Extension member: the id also sent in `X-Request-Id` and logged as `reqId`. */
  requestId: string;
  /** Extension member: every validation problem, as in the NestJS `message` array. */
  errors?: string[];
}

/**
 * True when `application/problem+json` is acceptable and ranked at least as high as
 * `application/json` (RFC 9110 section 12.5.1 quality values; `*` wildcards are not a request).
 */
export function wantsProblem(accept: string | undefined): boolean {
  if (accept === undefined || !accept.includes('problem+json')) return false;
  let problem = 0;
  let json = 0;
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const quality = q === undefined ? 1 : Number(q.slice(2)) || 0;
    if (type.trim() === 'application/problem+json') problem = Math.max(problem, quality);
    if (type.trim() === 'application/json') json = Math.max(json, quality);
  }
  return problem > 0 && problem >= json;
}

export function problemOf(body: ErrorBody, instance: string | undefined, requestId: string): ProblemDetails {
  const problem: ProblemDetails = {
    type: 'about:blank',
    title: body.error,
    status: body.statusCode,
    detail: Array.isArray(body.message) ? body.message.join('; ') : body.message,
    requestId,
  };
  if (instance !== undefined) problem.instance = instance;
  if (Array.isArray(body.message)) problem.errors = body.message;
  return problem;
}
