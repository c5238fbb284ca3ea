import { expect } from 'vitest';
import { MatchingEngine } from '../../src/matching/engine.js';
import type { CommandResult } from '../../src/matching/errors.js';
import type { Command, EngineEvent, MarketSpec, Side } from '../../src/matching/types.js';

/** A market with 2 price decimals and 3 amount decimals: price 100.00 is 10000n, amount 1.000 is 1000n. */
export const SPEC: MarketSpec = {
  id: 'btcuah',
  pricePrecision: 2,
  amountPrecision: 3,
  makerFeePpm: 1_000,
  takerFeePpm: 2_000,
};

export function engine(spec: Partial<MarketSpec> = {}): MatchingEngine {
  return new MatchingEngine({ ...SPEC, ...spec });
}

let clock = 1_700_000_000_000;

export function limit(id: number, account: string, side: Side, price: bigint, amount: bigint): Command {
  return { type: 'limit', id, account, side, price, amount, time: clock++ };
}

export function stop(
  id: number,
  account: string,
  side: Side,
  stopPrice: bigint,
  price: bigint,
  amount: bigint,
): Command {
  return { type: 'limit_stop_loss', id, account, side, price, stopPrice, amount, time: clock++ };
}

export function market(id: number, account: string, side: Side, amount: bigint, budget?: bigint): Command {
  return budget === undefined
    ? { type: 'market', id, account, side, amount, time: clock++ }
    : { type: 'market', id, account, side, amount, budget, time: clock++ };
}

export function byQuote(id: number, account: string, side: Side, quote: bigint, budget?: bigint): Command {
  return budget === undefined
    ? { type: 'market_by_quote', id, account, side, quote, time: clock++ }
    : { type: 'market_by_quote', id, account, side, quote, budget, time: clock++ };
}

export function cancel(id: number, account?: string): Command {
  return account === undefined
    ? { type: 'cancel', id, time: clock++ }
    : { type: 'cancel', id, account, time: clock++ };
}

/** Applies a command that must succeed and returns its events. */
export function ok(e: MatchingEngine, cmd: Command): EngineEvent[] {
  const result: CommandResult = e.apply(cmd);
  if (!result.ok) throw new Error(`expected success, got ${result.code}: ${result.message}`);
  return result.events;
}

/** Applies a command that must be refused with `code`, and checks that it changed nothing. */
export function refused(e: MatchingEngine, cmd: Command, code: string): void {
  const before = JSON.stringify(e.snapshot());
  const result = e.apply(cmd);
  expect(result.ok ? 'accepted' : result.code).toBe(code);
  expect(JSON.stringify(e.snapshot())).toBe(before);
}

export function ofType<T extends EngineEvent['type']>(
  events: EngineEvent[],
  type: T,
): Extract<EngineEvent, { type: T }>[] {
  return events.filter((e): e is Extract<EngineEvent, { type: T }> => e.type === type);
}
