import type { MatchingEngine } from '../matching/engine.js';
import type { Asset, Command } from '../matching/types.js';
import { lockFor } from '../matching/validate.js';
import { balanceKey, fundsNeeded } from './batch-inputs.js';
import type { TradingMarket } from './markets.js';
import type { Pending } from './queued.js';
import type { OrderRefusal, OrderRequest } from './requests.js';

/** A balance a batch checks, with the ledger units its requests need from it ('fresh': read it again). */
export interface NeededBalance {
  readonly accountId: number;
  readonly currency: string;
  readonly total: bigint | 'fresh';
}

/** What a batch is computed on: the balances it checks and the API keys whose nonces it uses. */
export interface BatchNeeds {
  readonly balances: Map<string, NeededBalance>;
  readonly keyIds: Set<number>;
}

/** The currency an order request locks (none for a cancel). */
export function lockCurrency(market: TradingMarket, request: OrderRequest): string | undefined {
  if (request.type === 'cancel') return undefined;
  // An amend locks more of the order's own lock currency when it grows its reserve.
  return request.side === 'buy' ? market.quote : market.base;
}

/** The balances a batch checks (with the funds its requests need from each) and the keys it uses. */
export function needsOf(market: TradingMarket, batch: readonly Pending[]): BatchNeeds {
  const balances = new Map<string, NeededBalance>();
  const keyIds = new Set<number>();
  for (const { request, nonce } of batch) {
    if (nonce) keyIds.add(nonce.keyId);
    const currency = lockCurrency(market, request);
    if (!currency) continue;
    const key = balanceKey(request.accountId, currency);
    const needed = fundsNeeded(market, request);
    const sum = balances.get(key)?.total ?? 0n;
    const total = needed === 'fresh' || sum === 'fresh' ? 'fresh' : sum + needed;
    balances.set(key, { accountId: request.accountId, currency, total });
  }
  return { balances, keyIds };
}

/**
 * The lock an order command takes, refused when the engine refuses the command or when `available`
 * (ledger units of the lock currency) does not cover it.
 */
export function checkFunds(
  market: TradingMarket,
  engine: MatchingEngine,
  command: Exclude<Command, { type: 'cancel' | 'amend' }>,
  currency: string,
  available: bigint,
): { readonly asset: Asset; readonly amount: bigint } | OrderRefusal {
  const lock = lockFor(engine.market, command);
  if ('ok' in lock) return { ok: false, code: lock.code, message: lock.message };
  const needed = lock.asset === 'base' ? market.baseToLedger(lock.amount) : market.quoteToLedger(lock.amount);
  if (available < needed) {
    return {
      ok: false,
      code: 'INSUFFICIENT_FUNDS',
      message: `the order needs ${lock.asset === 'base' ? market.formatAmount(lock.amount) : market.formatTotal(lock.amount)} ${currency} locked, more than is available`,
    };
  }
  return lock;
}
