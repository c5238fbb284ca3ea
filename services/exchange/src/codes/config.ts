import { integer } from '../settings/parse.js';
import { DEFAULT_FAILURE_LIMITS, type FailureLimits } from './limits.js';

/** Failed transfer-code redemptions allowed per account and per client address within one window. */
export function codeFailureLimitsConfig(env: NodeJS.ProcessEnv): FailureLimits {
  return Object.freeze({
    perAccount: integer(
      env,
      'SVC_CODE_FAILURES_PER_ACCOUNT',
      DEFAULT_FAILURE_LIMITS.perAccount,
      1,
      1_000_000,
    ),
    perAddress: integer(
      env,
      'SVC_CODE_FAILURES_PER_ADDRESS',
      DEFAULT_FAILURE_LIMITS.perAddress,
      1,
      1_000_000,
    ),
    windowMs: integer(env, 'SVC_CODE_FAILURE_WINDOW_MS', DEFAULT_FAILURE_LIMITS.windowMs, 1_000, 86_400_000),
  });
}
