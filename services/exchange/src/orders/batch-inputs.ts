import type { TradingMarket } from './markets.js';
import type { OrderRequest } from './requests.js';
import type { KeyNonces } from './store.js';

export const balanceKey = (accountId: number, currency: string): string => `${accountId}:${currency}`;

/** How many balances and keys are remembered; the least recently used are forgotten first. */
const CAPACITY = 100_000;

/**
 * What the order writers remember between batches of the balances they check and the API keys whose
 * nonces they record, so that a batch reads from the database only what it does not know.
 *
 * A remembered value may be out of date, and that is safe in both directions:
 * - Too high (funds spent, a nonce used, a key disabled elsewhere since): the batch's writing
 *   statement checks the balances and nonces it relies on and refuses itself; the writer forgets what
 *   that batch used and computes it again on values read fresh.
 * - Too low (funds credited elsewhere): a request that does not fit what is remembered makes the
 *   batch read that balance, so an order is refused for lack of funds only on a value just read.
 *
 * Values come from the batch reads and from what each batch's writing statement returns (every
 * balance it changed, as stored after it). Batches are sent before their predecessors commit
 * (src/orders/pipeline.ts), so a remembered value is what every batch sent so far will leave: a batch
 * shifts the balances it moves when it is sent (`sent`); the stored value a committed batch returns
 * is taken only for balances no later batch in flight moves (`committed`); a failed batch forgets
 * what it relied on and moved (`failed`). Writers compute one batch at a time
 * (`BatchPipeline.exclusive`), so one instance is shared by all markets.
 */
export class BatchInputs {
  private readonly balances = new Map<string, bigint>();
  private readonly keys = new Map<number, KeyNonces>();
  /** Balances moved by batches in flight, with the number of such batches. */
  private readonly inFlight = new Map<string, number>();

  balance(key: string): bigint | undefined {
    return this.balances.get(key);
  }

  key(id: number): KeyNonces | undefined {
    return this.keys.get(id);
  }

  learnBalance(key: string, available: bigint): void {
    remember(this.balances, key, available);
  }

  learnKey(id: number, nonces: KeyNonces): void {
    remember(this.keys, id, nonces);
  }

  forget(balanceKeys: Iterable<string>, keyIds: Iterable<number>): void {
    for (const key of balanceKeys) this.balances.delete(key);
    for (const id of keyIds) this.keys.delete(id);
  }

  /** A batch moving these available funds (by balance key) was sent: remembered values follow it. */
  sent(moves: ReadonlyMap<string, bigint>): void {
    for (const [key, delta] of moves) {
      this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
      const known = this.balances.get(key);
      if (known !== undefined) remember(this.balances, key, known + delta);
    }
  }

  /** The batch committed; `stored` holds the balances it changed as they are now. */
  committed(moves: ReadonlyMap<string, bigint>, stored: ReadonlyMap<string, bigint>): void {
    this.land(moves.keys());
    // A balance a later batch in flight moves keeps the value that batch will leave.
    for (const [key, available] of stored)
      if (!this.inFlight.has(key)) remember(this.balances, key, available);
  }

  /** The batch failed: what it relied on or moved may be out of date. */
  failed(moves: ReadonlyMap<string, bigint>, balanceKeys: Iterable<string>, keyIds: Iterable<number>): void {
    this.land(moves.keys());
    this.forget([...balanceKeys, ...moves.keys()], keyIds);
  }

  private land(keys: Iterable<string>): void {
    for (const key of keys) {
      const count = (this.inFlight.get(key) ?? 0) - 1;
      if (count > 0) this.inFlight.set(key, count);
      else this.inFlight.delete(key);
    }
  }
}

function remember<K, V>(map: Map<K, V>, key: K, value: V): void {
  // Re-inserting moves the entry to the end: Map iteration order is the recency order.
  map.delete(key);
  map.set(key, value);
  if (map.size > CAPACITY) map.delete(map.keys().next().value as K);
}

/**
 * Ledger units of its lock currency a request needs available, or 'fresh' when it spends whatever is
 * available (a market buy by base amount, a market sell by quote amount) and so needs the stored
 * value. A cancel needs nothing. Invalid requests are refused by the engine's checks later; the
 * figure only decides whether the batch reads the balance.
 */
export function fundsNeeded(market: TradingMarket, request: OrderRequest): bigint | 'fresh' {
  switch (request.type) {
    case 'cancel':
      return 0n;
    case 'amend':
      // What it adds depends on the order as the engine holds it: read the balance fresh.
      return 'fresh';
    case 'limit':
    case 'limit_stop_loss':
      return request.side === 'buy'
        ? market.quoteToLedger(request.price * request.amount)
        : market.baseToLedger(request.amount);
    case 'market':
      return request.side === 'buy' ? 'fresh' : market.baseToLedger(request.amount);
    case 'market_by_quote':
      return request.side === 'buy' ? market.quoteToLedger(request.quote) : 'fresh';
  }
}
