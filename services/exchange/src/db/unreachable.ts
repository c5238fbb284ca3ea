const CONNECTION_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);

/**
 * The database went out of reach under the request (a cut connection, a server restarting): the
 * routes answer 503 `unavailable`, which a client may retry, rather than a 500 (a cluster node cut off
 * from PostgreSQL), and an owner answers a forwarded order's outcome as unknown (cluster/forward.ts).
 */
export function databaseUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || /^(08|57P)/.test(code))) return true;
  return /Connection terminated|Client has encountered a connection error|connection timeout/i.test(
    error.message,
  );
}
