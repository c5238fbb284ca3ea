import { PLAYGROUND_ASSETS } from './playground/assets.js';

/**
 * The blog's HTTP paths and their methods, so that everything outside them answers in the blog's one
 * error shape (GraphQL's `{"errors": [{message, extensions: {code}}]}`) instead of graphql-yoga's empty
 * 404: an unknown path is 404 `NOT_FOUND`, a known path with another method 405 `METHOD_NOT_ALLOWED`
 * with `allow`. OPTIONS stays with yoga (CORS preflight).
 */
const ROUTES: Readonly<Record<string, readonly string[]>> = {
  '/': ['GET', 'HEAD'],
  '/health': ['GET', 'HEAD'],
  '/health/live': ['GET', 'HEAD'],
  '/health/ready': ['GET', 'HEAD'],
  '/graphql': ['GET', 'POST'],
  '/yoga-health': ['GET', 'HEAD'],
  // the GraphQL playground's script, style, icon and editor workers (src/playground/)
  ...Object.fromEntries(Object.values(PLAYGROUND_ASSETS).map((path) => [path, ['GET', 'HEAD']])),
};

export type RouteRefusal =
  | { readonly status: 404; readonly body: string }
  | { readonly status: 405; readonly body: string; readonly allow: string };

const errorBody = (message: string, code: string): string =>
  JSON.stringify({ errors: [{ message, extensions: { code } }] });

/** The refusal for `method path`, or undefined when a route answers it. */
export function refuseRoute(method: string, path: string): RouteRefusal | undefined {
  const methods = ROUTES[path];
  const shown = path.length <= 256 ? path : `${path.slice(0, 256)}…`;
  if (!methods) return { status: 404, body: errorBody(`no route ${method} ${shown}`, 'NOT_FOUND') };
  if (method === 'OPTIONS' || methods.includes(method)) return undefined;
  const allow = methods.join(', ');
  return {
    status: 405,
    body: errorBody(`${method} is not allowed on ${shown}; allowed: ${allow}`, 'METHOD_NOT_ALLOWED'),
    allow,
  };
}
