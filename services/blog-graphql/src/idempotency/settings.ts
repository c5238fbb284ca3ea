import { settingReaders } from '@platform/http-edge/env-settings';
import type { IdempotencyBounds } from './records.js';

/**
 * The idempotency store's settings: how long answers are kept and how many (issue 41). Read by
 * config.ts with the service's error class.
 *
 * - `IDEMPOTENCY_TTL_SECONDS` @default 86400: how long an answer is replayed;
 * - `IDEMPOTENCY_MAX_KEYS` @default 50000: answers kept in total, the oldest dropped first;
 * - `IDEMPOTENCY_MAX_KEYS_PER_CREDENTIAL` @default 10000: answers kept for one `Authorization`;
 * - `IDEMPOTENCY_MAX_BYTES` @default 67108864 (64 MiB): their size in total.
 */
export function parseIdempotencyBounds(
  env: Readonly<Record<string, string | undefined>>,
  fail: (message: string) => Error,
): IdempotencyBounds {
  const { integer } = settingReaders(fail);
  return {
    ttlMs: integer(env, 'IDEMPOTENCY_TTL_SECONDS', 86_400, 1, 30 * 86_400) * 1000,
    maxKeys: integer(env, 'IDEMPOTENCY_MAX_KEYS', 50_000, 1, 10_000_000),
    maxKeysPerCredential: integer(env, 'IDEMPOTENCY_MAX_KEYS_PER_CREDENTIAL', 10_000, 1, 10_000_000),
    maxBytes: integer(env, 'IDEMPOTENCY_MAX_BYTES', 64 * 1024 * 1024, 1024, 64 * 1024 * 1024 * 1024),
  };
}
