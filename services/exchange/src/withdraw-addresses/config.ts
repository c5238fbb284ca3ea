import { integer } from '../settings/parse.js';

/** The withdrawal address book (src/withdraw-addresses/, issue 43). */
export interface WithdrawAddressConfig {
  /**
   * How long a new entry stays locked after its confirmation (the e-mailed link, or its creation when
   * the account does not confirm withdrawals by mail) before a restricted withdrawal may use it.
   * @default 86400000 (`WITHDRAW_ADDRESS_LOCK_S` 86400, 0..2592000)
   */
  readonly lockMs: number;
}

export const DEFAULT_WITHDRAW_ADDRESS_LOCK_S = 86_400;

export function withdrawAddressConfig(env: NodeJS.ProcessEnv): WithdrawAddressConfig {
  const seconds = integer(env, 'WITHDRAW_ADDRESS_LOCK_S', DEFAULT_WITHDRAW_ADDRESS_LOCK_S, 0, 2_592_000);
  return Object.freeze({ lockMs: seconds * 1000 });
}
