/**
 * The errors of the HTTP edge itself, the same in the exchange and the payment gateway (codes 1000 to
 * 1013): each service's registry (`src/errors.ts`) includes these names and adds its own. The
 * numbers are documented in both services' references and never change.
 */
export type EdgeErrorName =
  | 'internal'
  | 'validation_failed'
  | 'malformed_json'
  | 'body_too_large'
  | 'unsupported_media_type'
  | 'not_found'
  | 'uri_too_long'
  | 'method_not_allowed'
  | 'unavailable';

export interface ErrorSpec {
  readonly code: number;
  readonly status: number;
}

const EDGE_ERRORS: Readonly<Record<EdgeErrorName, ErrorSpec>> = {
  internal: { code: 1000, status: 500 },
  validation_failed: { code: 1001, status: 400 },
  malformed_json: { code: 1002, status: 400 },
  body_too_large: { code: 1003, status: 413 },
  unsupported_media_type: { code: 1004, status: 415 },
  not_found: { code: 1005, status: 404 },
  uri_too_long: { code: 1010, status: 414 },
  unavailable: { code: 1011, status: 503 },
  method_not_allowed: { code: 1013, status: 405 },
};

/** The code and status of an edge error, or undefined for a name of the service's own. */
export function edgeErrorSpec(name: string): ErrorSpec | undefined {
  return Object.hasOwn(EDGE_ERRORS, name) ? EDGE_ERRORS[name as EdgeErrorName] : undefined;
}

/**
 * A service's whole registry: the edge's errors by their fixed codes, the service's own through
 * `own` (its exhaustive switch over the names that are not the edge's).
 */
export function registrySpec<N extends string>(
  own: (name: Exclude<N, EdgeErrorName>) => ErrorSpec,
): (name: N) => ErrorSpec {
  return (name) => edgeErrorSpec(name) ?? own(name as Exclude<N, EdgeErrorName>);
}
