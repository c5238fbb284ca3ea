import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError, type ErrorName, errorSpec } from '../errors.js';
import { errorResponses } from '../http/schemas.js';
import type { App } from '../http/typed.js';
import { confirmPage, purposeLabel, resultPage } from '../mail/link-page.js';
import type { ActionLinks, LinkProblem } from '../mail/links.js';

const TokenParams = Type.Object({ token: Type.String({ maxLength: 200 }) });

const LinkResult = Type.Object({
  purpose: Type.String(),
  subject_id: Type.Integer(),
  action: Type.Union([Type.Literal('confirm'), Type.Literal('cancel')]),
  ok: Type.Boolean({ description: 'false when the subject could no longer take the action' }),
  message: Type.String(),
});

const PROBLEMS: Readonly<Record<LinkProblem, { name: ErrorName; message: string }>> = {
  unknown: { name: 'link_unknown', message: 'this link is not valid' },
  used: { name: 'link_used', message: 'this link has already been used' },
  expired: { name: 'link_expired', message: 'this link has expired' },
};

/** Browsers get HTML pages; API clients asking for JSON get the service's JSON shapes. */
function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

function refuse(request: FastifyRequest, reply: FastifyReply, problem: LinkProblem) {
  const { name, message } = PROBLEMS[problem];
  if (wantsJson(request)) throw new ApiError(name, message);
  return reply
    .status(errorSpec(name).status)
    .type('text/html; charset=utf-8')
    .send(resultPage('Link not usable', message));
}

/**
 * The confirm/cancel links of e-mails (withdrawals, transfer codes): `GET` shows what the link does,
 * `POST` does it. The token in the path is the only credential: it is single-use and expires.
 */
export function linkRoutes(app: App, links: ActionLinks): void {
  app.get(
    '/v3/links/:token',
    {
      schema: {
        tags: ['e-mail links'],
        summary: 'Page of an e-mailed confirm or cancel link (acts only on POST)',
        params: TokenParams,
        response: { ...errorResponses },
      },
      // The path parameter is a secret: the request log line shows it as [REDACTED] (@platform/logging).
    },
    async (request, reply) => {
      const found = await links.inspect(request.params.token);
      if (!found.ok) return refuse(request, reply, found.problem);
      const html = confirmPage(
        found.subject.purpose,
        found.subject.subjectId,
        found.action,
        request.params.token,
      );
      return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(html);
    },
  );

  app.post(
    '/v3/links/:token',
    {
      schema: {
        tags: ['e-mail links'],
        summary: 'Use an e-mailed confirm or cancel link (single use)',
        params: TokenParams,
        response: { 200: LinkResult, ...errorResponses },
      },
      logLevel: 'warn',
    },
    async (request, reply) => {
      const used = await links.use(request.params.token);
      if (!used.ok) return refuse(request, reply, used.problem);
      const { subject, action, outcome } = used;
      if (wantsJson(request)) {
        return {
          purpose: subject.purpose,
          subject_id: subject.subjectId,
          action,
          ok: outcome.ok,
          message: outcome.message,
        };
      }
      const title = `${purposeLabel(subject.purpose)} #${subject.subjectId}`;
      return reply
        .header('cache-control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(resultPage(title.charAt(0).toUpperCase() + title.slice(1), outcome.message));
    },
  );
}
