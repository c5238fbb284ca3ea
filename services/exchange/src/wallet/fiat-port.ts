/**
 * The port through which `POST /v3/auth/withdraw` hands a fiat request (a currency with `coin:
 * false`) to the fiat side (src/fiat/, implemented there and wired as `RouteDeps.fiatWithdrawals`).
 * Without it, fiat withdrawals answer `fiat_unavailable` (503).
 */

/** The withdraw body as the route parsed it (spec: "Withdrawal request body"). */
export interface WithdrawBody {
  /** Lower-case currency code. */
  readonly withdraw_type: string;
  /** A JSON number or a decimal string; parse with `requestAmount` (src/http/amounts.ts). */
  readonly amount: number | string;
  readonly address?: string;
  readonly gateway?: string;
  readonly fields?: Readonly<Record<string, unknown>>;
  readonly fund_source_id?: number;
  readonly payment_id?: string;
  readonly allow_blank_memo?: boolean;
  /** true or 1: the fee is taken from `amount`. */
  readonly withdrawall?: boolean | number;
}

/** One element of the withdraw method's array result. */
export interface WithdrawResultItem {
  readonly status: string;
  readonly message: string;
  readonly withdrawal_id: number;
}

export interface FiatWithdrawals {
  /**
   * Validates and records a fiat withdrawal of `accountId` (e.g. with `createWithdrawal` of
   * src/wallet/withdrawal-store.ts, rail 'fiat') and answers the spec's array result. Expected
   * refusals are thrown as ApiError.
   */
  withdraw(accountId: number, body: WithdrawBody): Promise<WithdrawResultItem[]>;
}
