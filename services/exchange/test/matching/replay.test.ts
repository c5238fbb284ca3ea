import { describe, expect, it } from 'vitest';
import { MatchingEngine } from '../../src/matching/engine.js';
import type { EngineSnapshot } from '../../src/matching/snapshot.js';
import type { Command, EngineEvent } from '../../src/matching/types.js';
import { limit, ok, SPEC } from './fixtures.js';
import { randomCommands } from './random-commands.js';

const spec = { ...SPEC, tickSize: 5n };

function run(engine: MatchingEngine, commands: Command[]): Array<EngineEvent[] | string> {
  return commands.map((cmd) => {
    const result = engine.apply(cmd);
    return result.ok ? result.events : result.code;
  });
}

describe('determinism', () => {
  const commands = randomCommands({ seed: 42, count: 3_000, accounts: 12 });

  it('replaying the same commands from empty state gives identical events and state', () => {
    const first = new MatchingEngine(spec);
    const second = new MatchingEngine(spec);
    expect(run(second, commands)).toEqual(run(first, commands));
    expect(second.snapshot()).toEqual(first.snapshot());
  });

  it("paging ids by a cluster's stride changes no event and no snapshot, for dense or strided ids", () => {
    // A cluster market's ids step by 1024 (writer.ts ID_STRIDE); ids from before the cluster do not.
    const strided = commands.map((cmd) => ({ ...cmd, id: cmd.id * 1_024 + 5 }));
    for (const stream of [commands, strided]) {
      const byId = new MatchingEngine(spec);
      const byStride = new MatchingEngine({ ...spec, idStride: 1_024 });
      expect(run(byStride, stream)).toEqual(run(byId, stream));
      expect(byStride.snapshot()).toEqual(byId.snapshot());
      const restored = MatchingEngine.restore({ ...spec, idStride: 1_024 }, byId.snapshot());
      expect(restored.snapshot()).toEqual(byId.snapshot());
    }
  });

  it('restoring a snapshot (through JSON) and replaying the rest gives the same events', () => {
    const whole = new MatchingEngine(spec);
    const expected = run(whole, commands);
    for (const cut of [1, 700, 1_500, 2_999]) {
      const head = new MatchingEngine(spec);
      run(head, commands.slice(0, cut));
      const saved = JSON.parse(JSON.stringify(head.snapshot())) as EngineSnapshot;
      const restored = MatchingEngine.restore(spec, saved);
      expect(restored.snapshot()).toEqual(head.snapshot());
      expect(run(restored, commands.slice(cut))).toEqual(expected.slice(cut));
      expect(restored.snapshot()).toEqual(whole.snapshot());
    }
  });

  it('a restored book keeps time priority within a level and stops in trigger order', () => {
    const e = new MatchingEngine(spec);
    ok(e, limit(1, 'a', 'sell', 10_000n, 10n));
    ok(e, limit(2, 'b', 'sell', 10_000n, 10n));
    ok(e, limit(3, 'c', 'sell', 9_995n, 10n));
    const restored = MatchingEngine.restore(spec, e.snapshot());
    const trades = ok(restored, limit(4, 'd', 'buy', 10_000n, 30n)).filter((ev) => ev.type === 'trade');
    expect(trades.map((t) => t.sellOrderId)).toEqual([3, 1, 2]);
  });

  it('refuses a snapshot of another market', () => {
    const snapshot = new MatchingEngine(spec).snapshot();
    expect(() => MatchingEngine.restore({ ...spec, id: 'ethuah' }, snapshot)).toThrow(/does not fit/);
  });
});
