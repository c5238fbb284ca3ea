import { integer } from '../settings/parse.js';

/** The dead-man's switch scheduler (src/cancel-all/, README "Cancel all and the dead-man's switch"). */
export interface CancelAfterConfig {
  /**
   * How often every node looks for due switches. A switch fires at most this long after its trigger,
   * plus the time its cancels take. @default 200 (`CANCEL_AFTER_CHECK_MS`, 10..1000)
   */
  readonly checkMs: number;
  /**
   * How long a node's claim on a due switch keeps the other nodes off it; a claimer that died (or
   * could not reach a market) is replaced once it passes. @default 5000 (`CANCEL_AFTER_CLAIM_MS`, 1000..600000)
   */
  readonly claimMs: number;
}

export const DEFAULT_CANCEL_AFTER: CancelAfterConfig = Object.freeze({ checkMs: 200, claimMs: 5_000 });

export function cancelAfterConfig(env: NodeJS.ProcessEnv): CancelAfterConfig {
  return Object.freeze({
    checkMs: integer(env, 'CANCEL_AFTER_CHECK_MS', DEFAULT_CANCEL_AFTER.checkMs, 10, 1_000),
    claimMs: integer(env, 'CANCEL_AFTER_CLAIM_MS', DEFAULT_CANCEL_AFTER.claimMs, 1_000, 600_000),
  });
}
