/**
 * The page at `/` of every HTTP service: what the service is and links to its docs, health and
 * metrics, so that opening the address the launcher prints shows where to go next. No scripts, no
 * external assets.
 */
export interface LandingLink {
  readonly label: string;
  readonly href: string;
  readonly note?: string;
}

export interface LandingPage {
  readonly title: string;
  readonly summary: string;
  readonly links: readonly LandingLink[];
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function renderLandingPage(page: LandingPage): string {
  const items = page.links
    .map(
      (link) =>
        `<li><a href="${escapeHtml(link.href)}">${escapeHtml(link.label)}</a>${link.note ? ` <span>${escapeHtml(link.note)}</span>` : ''}</li>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
li{margin:.4rem 0}span{color:#555}</style></head>
<body>
<h1>${escapeHtml(page.title)}</h1>
<p>${escapeHtml(page.summary)}</p>
<ul>
${items}
</ul>
</body>
</html>
`;
}

/** Minimal view of a Fastify instance: `GET /` hidden from the OpenAPI document. */
interface RouteHost {
  get(
    path: string,
    options: { schema: { hide: boolean } },
    handler: (request: unknown, reply: { type(t: string): { send(body: string): unknown } }) => unknown,
  ): unknown;
}

/** Registers `GET /` answering the landing page (hidden from the OpenAPI document). */
export function landingRoute(app: RouteHost, page: LandingPage): void {
  const html = renderLandingPage(page);
  app.get('/', { schema: { hide: true } }, (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(html),
  );
}
