/**
 * The two engines of `bench:engine` behind the bench's `Engine` interface: ours (optionally following
 * its book levels as the order writer does) and `nodejs-order-book`. Each builds its own input
 * objects from the stream's columns inside the timed loop.
 */
import { OrderBook, type SelfTradePreventionMode } from 'nodejs-order-book';
import { MatchingEngine } from '../src/matching/engine.js';
import type { Command } from '../src/matching/types.js';
import type { Engine } from './measure.js';
import { AMEND, accountNames as accounts, CANCEL, LIMIT, type Stream, TIFS } from './streams.js';

const BUDGET = 10n ** 18n;

/**
 * What the adapter needs of an engine: today's `MatchingEngine`, or an earlier commit's loaded from
 * another checkout (bench/engine-against.ts), whose command type is older but a subset of today's.
 */
export interface BookEngine {
  apply(cmd: Command): { readonly ok: boolean };
  followLevels(): void;
  takeChangedLevels(): unknown;
  readonly openOrders: number;
}
export type BookEngineClass = new (spec: {
  id: string;
  pricePrecision: number;
  amountPrecision: number;
}) => BookEngine;

/** Our engine; `levelsEvery` > 0: following its levels, taken every that many commands. */
export function ours(levelsEvery: number, EngineClass: BookEngineClass = MatchingEngine): Engine {
  const engine = new EngineClass({ id: 'benchusd', pricePrecision: 2, amountPrecision: 4 });
  if (levelsEvery > 0) engine.followLevels();
  const run = (s: Stream, i: number): number => {
    if (levelsEvery > 0 && i % levelsEvery === 0) engine.takeChangedLevels();
    const kind = s.kind[i]!;
    let cmd: Command;
    if (kind === CANCEL) cmd = { type: 'cancel', id: s.id[i]!, time: i };
    else if (kind === AMEND) {
      cmd =
        s.amount[i] !== 0
          ? { type: 'amend', id: s.id[i]!, amount: BigInt(s.amount[i]!), time: i }
          : { type: 'amend', id: s.id[i]!, price: BigInt(s.price[i]!), time: i };
    } else if (kind === LIMIT) {
      const tif = s.tif[i]!;
      // Literals, not a spread (a spread builds each object on a slow path and gives it a shape of its
      // own): today's shape, and the same with `tif` last for an IOC/FOK limit of the variant.
      cmd =
        tif === 0
          ? {
              type: 'limit',
              id: s.id[i]!,
              account: accounts[s.account[i]!]!,
              side: s.side[i] === 0 ? 'buy' : 'sell',
              price: BigInt(s.price[i]!),
              amount: BigInt(s.amount[i]!),
              time: i,
            }
          : {
              type: 'limit',
              id: s.id[i]!,
              account: accounts[s.account[i]!]!,
              side: s.side[i] === 0 ? 'buy' : 'sell',
              price: BigInt(s.price[i]!),
              amount: BigInt(s.amount[i]!),
              time: i,
              tif: TIFS[tif]!,
            };
    } else {
      cmd = {
        type: 'market',
        id: s.id[i]!,
        account: accounts[s.account[i]!]!,
        side: s.side[i] === 0 ? 'buy' : 'sell',
        amount: BigInt(s.amount[i]!),
        budget: BUDGET,
        time: i,
      };
    }
    return engine.apply(cmd).ok ? 0 : -1;
  };
  return { run, resting: () => engine.openOrders };
}

/** The baseline's "expire maker" self-trade prevention is our policy (cancel the resting order). */
const EXPIRE_MAKER = 'EXPIRE_MAKER' as SelfTradePreventionMode;

export function baseline(): Engine {
  const book = new OrderBook();
  let resting = 0;
  const run = (s: Stream, i: number): number => {
    const kind = s.kind[i]!;
    // The baseline's enums are plain strings at run time.
    const side = (s.side[i] === 0 ? 'buy' : 'sell') as Parameters<OrderBook['market']>[0]['side'];
    if (kind === CANCEL) {
      const cancelled = book.cancel(String(s.id[i]!));
      if (cancelled === undefined) return -1;
      resting--;
      return 0;
    }
    const accountId = accounts[s.account[i]!]!;
    const size = s.amount[i]!;
    const result =
      kind === LIMIT
        ? book.limit({
            id: String(s.id[i]!),
            side,
            size,
            price: s.price[i]!,
            accountId,
            stpMode: EXPIRE_MAKER,
          })
        : book.market({ side, size, accountId, stpMode: EXPIRE_MAKER });
    if (result.err !== null) return -1;
    if (kind === LIMIT && result.quantityLeft > 0) resting++;
    resting -= result.done.length - (kind === LIMIT && result.quantityLeft === 0 ? 1 : 0);
    return 0;
  };
  return { run, resting: () => resting };
}
