/**
 * Secret redaction shared by every logger: what pino's `redact` removes by field name, and what the
 * text scrubber removes from any string (passwords in URLs, secret-looking query values).
 */
export const REDACTED = '[REDACTED]';

/**
 * Field names whose values are secrets wherever they appear. pino's `redact` matches exact paths;
 * each name is listed at the top level and one level down (`*.name`), which covers `{ apiSecret }`,
 * `{ demo: { apiSecret } }` and `req.headers.authorization`.
 */
const SECRET_FIELDS = [
  'apiSecret',
  'api_secret',
  'secret',
  'password',
  'passphrase',
  'token',
  'accessToken',
  'access_token',
  'refreshToken',
  'authToken',
  'authorization',
  'Authorization',
  'cookie',
  'set-cookie',
  'transferCode',
  'cardNumber',
  'card_number',
  'cvc',
  'cvv',
  'pan',
  'masterKey',
  'privateKey',
  'signature',
  'svc-signature',
  'x-signature',
  'svc-apikey',
];

export const REDACT_PATHS: readonly string[] = SECRET_FIELDS.flatMap((name) => {
  const key = /^[A-Za-z_$][\w$]*$/.test(name) ? name : `["${name}"]`;
  const nested = key.startsWith('[') ? `*${key}` : `*.${key}`;
  return [key, nested, `req.headers${key.startsWith('[') ? key : `.${key}`}`];
});

/** Query parameter and route parameter names whose values are secrets. */
export const SECRET_NAME = /token|secret|sig|pass|pwd|key|code|auth|card|cvc|cvv|pan|otp|session|cookie/i;

/** `scheme://user:password@host` anywhere in a string. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@:]*):([^\s/?#@]*)@/gi;
/** `name=value` pairs in a query string whose name looks secret. */
const SECRET_QUERY = /([?&;])([^=&#\s"']+)=([^&#\s"']*)/g;

/** Redacts passwords in URLs and secret-looking query values inside any text. */
export function redactText(text: string): string {
  if (!text.includes('://') && !text.includes('=')) return text;
  return text
    .replace(URL_USERINFO, (_all, scheme: string, user: string) => `${scheme}${user}:${REDACTED}@`)
    .replace(SECRET_QUERY, (all, sep: string, name: string) =>
      SECRET_NAME.test(name) ? `${sep}${name}=${REDACTED}` : all,
    );
}

/** A URL as it may be logged: password and secret query values replaced. */
export function redactUrl(url: string | URL): string {
  return redactText(String(url));
}

/**
 * A request path as it may be logged: secret query values replaced, and the values of secret route
 * parameters (`/v3/links/:token`, `/v3/svc_codes/:code/check`) replaced by `[REDACTED]`.
 */
export function redactRequestPath(url: string, params?: Readonly<Record<string, unknown>>): string {
  let path = redactText(url);
  if (params) {
    for (const [name, value] of Object.entries(params)) {
      if (typeof value !== 'string' || value.length === 0 || !SECRET_NAME.test(name)) continue;
      for (const form of new Set([encodeURIComponent(value), value])) path = path.split(form).join(REDACTED);
    }
  }
  return path;
}

/** Walks plain objects and arrays (bounded depth) and scrubs every string with `redactText`. */
export function redactDeep(value: unknown, depth = 4): unknown {
  if (typeof value === 'string') return redactText(value);
  if (depth === 0 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, depth - 1));
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v, depth - 1);
  return out;
}
