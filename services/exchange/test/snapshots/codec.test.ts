import { describe, expect, it } from 'vitest';
import { MatchingEngine } from '../../src/matching/engine.js';
import type { Command, EngineEvent } from '../../src/matching/types.js';
import { CorruptSnapshot, decodeSnapshot, encodeSnapshot } from '../../src/snapshots/codec.js';
import { SPEC } from '../matching/fixtures.js';
import { randomCommands } from '../matching/random-commands.js';

const spec = { ...SPEC, tickSize: 5n };

function run(engine: MatchingEngine, commands: readonly Command[]): Array<EngineEvent[] | string> {
  return commands.map((cmd) => {
    const result = engine.apply(cmd);
    return result.ok ? result.events : result.code;
  });
}

describe('binary book snapshots', () => {
  const commands = randomCommands({ seed: 21, count: 4_000, accounts: 15 });

  it('round-trips an engine: the restored one equals it and answers the rest of the commands alike', () => {
    const whole = new MatchingEngine(spec);
    const expected = run(whole, commands);
    for (const cut of [0, 1, 1_200, 3_999]) {
      const head = new MatchingEngine(spec);
      run(head, commands.slice(0, cut));
      const decoded = decodeSnapshot(encodeSnapshot(head.snapshot()));
      expect(decoded).toEqual(head.snapshot());
      const restored = MatchingEngine.restore(spec, decoded);
      expect(run(restored, commands.slice(cut))).toEqual(expected.slice(cut));
      expect(restored.snapshot()).toEqual(whole.snapshot());
    }
  });

  it('keeps filled and cancelled ids apart, so cancels of finished orders get their precise error', () => {
    const engine = new MatchingEngine(spec);
    run(engine, commands);
    const snapshot = engine.snapshot();
    expect(snapshot.filled.length).toBeGreaterThan(0);
    expect(snapshot.cancelled.length).toBeGreaterThan(0);
    const decoded = decodeSnapshot(encodeSnapshot(snapshot));
    expect(decoded.filled).toEqual(snapshot.filled);
    expect(decoded.cancelled).toEqual(snapshot.cancelled);
  });

  it('is compact: under 50 bytes per live order and a bit per closed id or so', () => {
    const engine = new MatchingEngine(spec);
    run(engine, commands);
    const snapshot = engine.snapshot();
    const bytes = encodeSnapshot(snapshot).length;
    const live = snapshot.book.length + snapshot.stops.length;
    expect(bytes).toBeLessThan(2_000 + live * 50 + snapshot.maxId / 2);
    expect(bytes).toBeLessThan(JSON.stringify(snapshot).length / 2);
  });

  it('refuses a torn, altered or foreign snapshot', () => {
    const engine = new MatchingEngine(spec);
    run(engine, commands.slice(0, 500));
    const bytes = encodeSnapshot(engine.snapshot());
    expect(() => decodeSnapshot(bytes.subarray(0, bytes.length - 100))).toThrow(CorruptSnapshot);
    expect(() => decodeSnapshot(bytes.subarray(0, 20))).toThrow(CorruptSnapshot);
    const flipped = Buffer.from(bytes);
    flipped[Math.floor(flipped.length / 2)]! ^= 1;
    expect(() => decodeSnapshot(flipped)).toThrow(/checksum/);
    expect(() => decodeSnapshot(Buffer.from('not a snapshot at all, really not one, no'))).toThrow(
      CorruptSnapshot,
    );
  });
});
