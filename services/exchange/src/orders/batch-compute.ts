import type { MatchingEngine } from '../matching/engine.js';
import type { AmendCommand, Command, DoneReason, EngineEvent, OrderCommand } from '../matching/types.js';
import type { BatchInputs } from './batch-inputs.js';
import type { BatchWork } from './batch-work.js';
import { checkFunds, lockCurrency } from './fund-check.js';
import type { TradingMarket } from './markets.js';
import { checkNonce } from './nonce-check.js';
import type { Pending } from './queued.js';
import type { OrderRefusal, OrderRequest } from './requests.js';
import { lockEntry, releaseEntry, tradeEntry } from './settlement.js';
import type { OrderReason } from './store.js';

/** What computing a batch takes besides the engine: the clock, the id sequences and the fee account. */
export interface ComputeContext {
  readonly now: () => number;
  readonly feeAccountId: number;
  readonly inputs: BatchInputs;
  nextOrderId(): number;
  nextTradeId(): number;
}

/** Per request: the refusal, or the id of the order it placed or cancelled. */
export type RequestResult = OrderRefusal | number;

/**
 * Runs a batch's requests through the engine in arrival order: nonce checked, funds checked and
 * locked, the command applied, its fills settled and unused locks released, all collected in `work`
 * (commands, orders, trades, journal entries). `work.available` must hold the checked balances.
 */
export function computeBatch(
  ctx: ComputeContext,
  market: TradingMarket,
  engine: MatchingEngine,
  batch: readonly Pending[],
  work: BatchWork,
): RequestResult[] {
  return batch.map((pending) => {
    const refused = pending.nonce
      ? checkNonce(ctx.inputs.key(pending.nonce.keyId), pending.nonce, work)
      : undefined;
    if (refused) return refused;
    const result = applyOne(ctx, market, engine, pending.request, work);
    // The key an order was placed with: the feed names it, REST's is the nonce's (src/cancel-all/).
    const keyId =
      pending.request.type === 'cancel' || pending.request.type === 'amend'
        ? undefined
        : (pending.request.keyId ?? pending.nonce?.keyId);
    if (typeof result === 'number' && keyId !== undefined) work.orderKeys.set(result, keyId);
    return result;
  });
}

function applyOne(
  ctx: ComputeContext,
  market: TradingMarket,
  engine: MatchingEngine,
  request: OrderRequest,
  work: BatchWork,
): RequestResult {
  const time = ctx.now();
  const account = String(request.accountId);
  if (request.type === 'cancel') {
    const command: Command = { type: 'cancel', id: request.orderId, account, time };
    const result = engine.apply(command);
    if (!result.ok) return { ok: false, code: result.code, message: result.message };
    record(ctx, market, command, result.events, work);
    return request.orderId;
  }
  const currency = lockCurrency(market, request)!;
  const available = work.available.get(`${request.accountId}:${currency}`) ?? 0n;
  if (request.type === 'amend')
    return applyAmend(ctx, market, engine, request, work, currency, available, time);
  const id = ctx.nextOrderId();
  // Options are written only when given, so the command log of plain orders stays as it was.
  const stp = request.stp === undefined ? {} : { stp: request.stp };
  let command: OrderCommand;
  switch (request.type) {
    case 'limit':
      command = {
        type: 'limit',
        id,
        account,
        side: request.side,
        price: request.price,
        amount: request.amount,
        time,
        ...(request.tif === undefined || request.tif === 'gtc' ? {} : { tif: request.tif }),
        ...(request.postOnly === true ? { postOnly: true } : {}),
        ...stp,
      };
      break;
    case 'limit_stop_loss':
      command = {
        type: 'limit_stop_loss',
        id,
        account,
        side: request.side,
        price: request.price,
        stopPrice: request.stopPrice ?? 0n,
        amount: request.amount,
        time,
        ...stp,
      };
      break;
    case 'market':
      if (request.side === 'buy') {
        // A market buy by base may spend what the account has: its available quote is the budget.
        const budget = market.ledgerToQuote(available);
        if (budget <= 0n) {
          return {
            ok: false,
            code: 'INSUFFICIENT_FUNDS',
            message: `no ${market.quote} available to buy with`,
          };
        }
        command = { type: 'market', id, account, side: 'buy', amount: request.amount, budget, time, ...stp };
      } else {
        command = { type: 'market', id, account, side: 'sell', amount: request.amount, time, ...stp };
      }
      break;
    case 'market_by_quote':
      if (request.side === 'sell') {
        const budget = market.ledgerToBase(available);
        if (budget <= 0n) {
          return { ok: false, code: 'INSUFFICIENT_FUNDS', message: `no ${market.base} available to sell` };
        }
        command = {
          type: 'market_by_quote',
          id,
          account,
          side: 'sell',
          quote: request.quote,
          budget,
          time,
          ...stp,
        };
      } else {
        command = { type: 'market_by_quote', id, account, side: 'buy', quote: request.quote, time, ...stp };
      }
      break;
  }
  const lock = checkFunds(market, engine, command, currency, available);
  if ('ok' in lock) return lock;
  const result = engine.apply(command);
  // checkFunds accepted it with a fresh id, so the engine accepts it too.
  if (!result.ok) return { ok: false, code: result.code, message: result.message };
  const entry = lockEntry(market, request.accountId, lock.asset, lock.amount, id, false);
  if (entry) work.post(entry);
  record(ctx, market, command, result.events, work);
  if (request.clientOrderId !== undefined)
    work.clientOrders.push([request.accountId, request.clientOrderId, id]);
  return id;
}

/**
 * An amend: the engine says what it adds to the order's lock; a growth needs that much available, a
 * shrink is released. The order row takes the new price and total amount.
 */
function applyAmend(
  ctx: ComputeContext,
  market: TradingMarket,
  engine: MatchingEngine,
  request: Extract<OrderRequest, { type: 'amend' }>,
  work: BatchWork,
  currency: string,
  available: bigint,
  time: number,
): RequestResult {
  const command: AmendCommand = {
    type: 'amend',
    id: request.orderId,
    account: String(request.accountId),
    time,
    ...(request.amount === undefined ? {} : { amount: request.amount }),
    ...(request.price === undefined ? {} : { price: request.price }),
  };
  const lock = engine.amendLock(command);
  if ('ok' in lock) return { ok: false, code: lock.code, message: lock.message };
  const needed = lock.asset === 'base' ? market.baseToLedger(lock.amount) : market.quoteToLedger(lock.amount);
  if (needed > 0n && available < needed) {
    return {
      ok: false,
      code: 'INSUFFICIENT_FUNDS',
      message: `the amended order needs ${lock.asset === 'base' ? market.formatAmount(lock.amount) : market.formatTotal(lock.amount)} ${currency} more locked than is available`,
    };
  }
  const result = engine.apply(command);
  if (!result.ok) return { ok: false, code: result.code, message: result.message };
  record(ctx, market, command, result.events, work);
  return request.orderId;
}

/** Logs an applied command and settles its events in the ledger. */
function record(
  ctx: ComputeContext,
  market: TradingMarket,
  command: Command,
  events: readonly EngineEvent[],
  work: BatchWork,
): void {
  work.commands.push(command);
  for (const event of events) work.events.push(event);
  for (const event of events) {
    switch (event.type) {
      case 'accepted':
        work.created.set(event.orderId, {
          id: event.orderId,
          market: market.id,
          accountId: Number(event.account),
          side: event.side,
          kind: event.kind,
          price: event.price,
          stopPrice: event.stopPrice,
          amount: event.amount,
          quote: event.quote,
          executed: 0n,
          funds: 0n,
          tradesCount: 0,
          state: 'wait',
          createdAt: event.time,
          updatedAt: event.time,
        });
        break;
      case 'trade': {
        const tradeId = ctx.nextTradeId();
        work.post(tradeEntry(market, event, tradeId, ctx.feeAccountId));
        work.trades.push({
          id: tradeId,
          market: market.id,
          price: event.price,
          amount: event.amount,
          quote: event.quote,
          takerSide: event.takerSide,
          buyOrderId: event.buyOrderId,
          sellOrderId: event.sellOrderId,
          buyAccount: Number(event.buyAccount),
          sellAccount: Number(event.sellAccount),
          buyerFee: event.buyerFee,
          sellerFee: event.sellerFee,
          createdAt: event.time,
          selfTrade: event.selfTrade,
        });
        work.fill(event.buyOrderId, event.amount, event.quote, event.time);
        work.fill(event.sellOrderId, event.amount, event.quote, event.time);
        break;
      }
      case 'done': {
        const release = releaseEntry(market, event);
        if (release) work.post(release);
        work.finish(event.orderId, event.status === 'filled' ? 'done' : 'cancel', event.time);
        if (isKeptReason(event.reason)) work.explain(event.orderId, event.reason, event.stp, event.time);
        break;
      }
      case 'stop_triggered':
        work.touch(event.orderId, event.time);
        break;
      case 'amended': {
        // The reserve follows the order (amend, or self-trade prevention `decrement`).
        const negative = event.lockDelta < 0n;
        const amount = negative ? -event.lockDelta : event.lockDelta;
        const entry = lockEntry(
          market,
          Number(event.account),
          event.lockAsset,
          amount,
          event.orderId,
          negative,
        );
        if (entry) work.post(entry);
        work.amend(event.orderId, event.price, event.amount, event.time);
        if (event.reason === 'self_trade_prevented')
          work.explain(event.orderId, event.reason, event.stp, event.time);
        break;
      }
    }
  }
}

/** The done reasons an order row keeps; the others (filled, cancelled, ...) follow from its state. */
function isKeptReason(reason: DoneReason): reason is OrderReason {
  return reason === 'self_trade_prevented' || reason === 'fok_not_filled' || reason === 'ioc_rest_cancelled';
}
