import { formatAmount } from '../money/decimal.js';
import { v3Order } from '../orders/format.js';
import type { OrderRow } from '../orders/store.js';
import type { ReferenceData } from '../reference/load.js';
import { encode } from './encode.js';
import type { PrivateBatch } from './journal.js';
import type { PrivateChannel } from './protocol.js';

/**
 * The frames of one committed batch on the private channels (`orders`, `balances`, `fills`), one per
 * account that the batch concerns and `wanted` selects: live, the accounts with subscribers; on a
 * resume, the one account resuming. The same function makes both, so a resumed frame is the one a
 * connected client got. Pure.
 */
export function privateFrames(
  reference: ReferenceData,
  batch: PrivateBatch,
  channel: PrivateChannel,
  wanted: (accountId: number) => boolean,
): Map<number, Buffer> {
  switch (channel) {
    case 'orders':
      return ordersFrames(batch, wanted);
    case 'balances':
      return balancesFrames(reference, batch, wanted);
    case 'fills':
      return fillsFrames(batch, wanted);
  }
}

function ordersFrames(batch: PrivateBatch, wanted: (accountId: number) => boolean): Map<number, Buffer> {
  const byAccount = new Map<number, OrderRow[]>();
  for (const order of batch.orders) {
    if (!wanted(order.accountId)) continue;
    const list = byAccount.get(order.accountId) ?? [];
    list.push(order);
    byAccount.set(order.accountId, list);
  }
  const out = new Map<number, Buffer>();
  for (const [accountId, list] of byAccount) {
    list.sort((a, b) => a.id - b.id);
    out.set(
      accountId,
      encode({
        event: 'orders',
        channel: 'orders',
        market: batch.market.id,
        seq: batch.seq,
        // The v3 order array, then why self-trade prevention, FOK or IOC ended or reduced the order
        // and the mode (null, null for every other order; docs/feed.md).
        orders: list.map((order) => [
          ...v3Order(batch.market, order),
          order.reason ?? null,
          order.stp ?? null,
        ]),
      }),
    );
  }
  return out;
}

function balancesFrames(
  reference: ReferenceData,
  batch: PrivateBatch,
  wanted: (accountId: number) => boolean,
): Map<number, Buffer> {
  const byAccount = new Map<number, { currency: string; available: string }[]>();
  for (const [key, available] of batch.balances) {
    const at = key.indexOf(':');
    const accountId = Number(key.slice(0, at));
    if (!wanted(accountId)) continue;
    const currency = key.slice(at + 1);
    const list = byAccount.get(accountId) ?? [];
    list.push({ currency, available: formatAmount(available, reference.ledgerPrecision(currency)) });
    byAccount.set(accountId, list);
  }
  const out = new Map<number, Buffer>();
  for (const [accountId, list] of byAccount) {
    list.sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
    out.set(
      accountId,
      encode({
        event: 'balances',
        channel: 'balances',
        market: batch.market.id,
        seq: batch.seq,
        balances: list,
      }),
    );
  }
  return out;
}

/** One fill per trade side of the account: what it bought or sold, its fee and its role. */
interface Fill {
  trade_id: number;
  order_id: number;
  market: string;
  side: 'buy' | 'sell';
  price: string;
  amount: string;
  fee: string;
  fee_currency: string;
  role: 'maker' | 'taker';
  at: number;
  /** Both orders of the trade are this account's (stp none). */
  self_trade: boolean;
}

function fillsFrames(batch: PrivateBatch, wanted: (accountId: number) => boolean): Map<number, Buffer> {
  const market = batch.market;
  const byAccount = new Map<number, Fill[]>();
  const add = (accountId: number, fill: Fill) => {
    const list = byAccount.get(accountId) ?? [];
    list.push(fill);
    byAccount.set(accountId, list);
  };
  for (const trade of batch.trades) {
    // Each side pays its fee in what it receives: the buyer in base, the seller in quote.
    const fill = (side: 'buy' | 'sell'): Fill => ({
      trade_id: trade.id,
      order_id: side === 'buy' ? trade.buyOrderId : trade.sellOrderId,
      market: market.id,
      side,
      price: market.formatPrice(trade.price),
      amount: market.formatAmount(trade.amount),
      fee: side === 'buy' ? market.formatAmount(trade.buyerFee) : market.formatTotal(trade.sellerFee),
      fee_currency: side === 'buy' ? market.base : market.quote,
      role: trade.takerSide === side ? 'taker' : 'maker',
      at: trade.createdAt,
      self_trade: trade.selfTrade === true,
    });
    if (wanted(trade.buyAccount)) add(trade.buyAccount, fill('buy'));
    if (wanted(trade.sellAccount)) add(trade.sellAccount, fill('sell'));
  }
  const out = new Map<number, Buffer>();
  for (const [accountId, fills] of byAccount) {
    out.set(
      accountId,
      encode({ event: 'fills', channel: 'fills', market: market.id, seq: batch.seq, fills }),
    );
  }
  return out;
}
