import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder holding the Envoy v3 rate-limit `.proto` files (`envoy/service/ratelimit/v3/rls.proto`
 * and the files it imports), to pass as an include directory to a proto loader. The files sit
 * outside `src/`, so this path is the same from `src/` (tsx, vitest) and from `dist/` (compiled).
 */
export const RATELIMIT_PROTO_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'proto');

/** The service definition file, relative to `RATELIMIT_PROTO_DIR`. */
export const RLS_PROTO = 'envoy/service/ratelimit/v3/rls.proto';

/**
 * The folder holding Envoy's own Rate Limit Quota Service protocol (RLQS), copied unchanged from
 * envoyproxy/data-plane-api and what it imports (`rlqs/SOURCES.md`). A separate include root:
 * Envoy's `envoy/type/v3/ratelimit_unit.proto` is not the hand-written one under `proto/`.
 * `google/protobuf/*` come from the loader (protobufjs ships them).
 */
export const RLQS_PROTO_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'rlqs');

/** The RLQS service definition file, relative to `RLQS_PROTO_DIR`. */
export const RLQS_PROTO = 'envoy/service/rate_limit_quota/v3/rlqs.proto';
