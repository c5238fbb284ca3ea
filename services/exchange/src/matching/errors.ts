import type { Asset, EngineEvent } from './types.js';

/**
 * The closed set of reasons the engine refuses a command. A refused command changes nothing and
 * emits nothing, so it can be dropped from the replay log. The HTTP edge maps each code to a status
 * (v2: 2002 create order failed / 2003 cancel failed / 2004 order not found).
 */
export type MatchingErrorCode =
  | 'INVALID_COMMAND'
  | 'INVALID_ORDER_ID'
  | 'DUPLICATE_ORDER_ID'
  | 'INVALID_SIDE'
  | 'INVALID_PRICE'
  | 'PRICE_PRECISION'
  | 'INVALID_AMOUNT'
  | 'AMOUNT_PRECISION'
  | 'AMOUNT_TOO_SMALL'
  | 'AMOUNT_TOO_LARGE'
  | 'TOTAL_TOO_SMALL'
  | 'INVALID_BUDGET'
  | 'ORDER_NOT_FOUND'
  | 'ORDER_ALREADY_FILLED'
  | 'ORDER_ALREADY_CANCELLED'
  | 'INVALID_TIME_IN_FORCE'
  | 'INVALID_STP'
  | 'POST_ONLY_WOULD_TAKE'
  | 'AMEND_BELOW_FILLED'
  | 'AMEND_WOULD_TAKE'
  | 'ORDER_NOT_AMENDABLE';

export interface MatchingError {
  readonly ok: false;
  readonly code: MatchingErrorCode;
  readonly message: string;
}

export interface Accepted {
  readonly ok: true;
  /** What the ledger locks for this command (0 for a cancel). */
  readonly lockAsset: Asset;
  readonly lock: bigint;
  readonly events: EngineEvent[];
}

export type CommandResult = Accepted | MatchingError;

export function fail(code: MatchingErrorCode, message: string): MatchingError {
  return { ok: false, code, message };
}
