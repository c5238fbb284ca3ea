import { MatchingEngine } from '../src/matching/engine.js';
import type { Command } from '../src/matching/types.js';
import { accountNames as accounts, CANCEL, generate, LIMIT, DEEP as SHALLOW } from './streams.js';

const s = generate(SHALLOW, 1_000_000, 7);
for (let rep = 0; rep < 3; rep++) {
  const engine = new MatchingEngine({ id: 'benchusd', pricePrecision: 2, amountPrecision: 4 });
  const t = performance.now();
  for (let i = 0; i < s.length; i++) {
    const kind = s.kind[i]!;
    let cmd: Command;
    if (kind === CANCEL) cmd = { type: 'cancel', id: s.id[i]!, time: i };
    else if (kind === LIMIT)
      cmd = {
        type: 'limit',
        id: s.id[i]!,
        account: accounts[s.account[i]!]!,
        side: s.side[i] === 0 ? 'buy' : 'sell',
        price: BigInt(s.price[i]!),
        amount: BigInt(s.amount[i]!),
        time: i,
      };
    else
      cmd = {
        type: 'market',
        id: s.id[i]!,
        account: accounts[s.account[i]!]!,
        side: s.side[i] === 0 ? 'buy' : 'sell',
        amount: BigInt(s.amount[i]!),
        budget: 10n ** 18n,
        time: i,
      };
    engine.apply(cmd);
  }
  console.log(((s.length / (performance.now() - t)) * 1000).toFixed(0), 'ops/s');
}
