import { createHash } from 'node:crypto';
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

  it("stays compact on a cluster market's ids (one residue modulo 1024), beside older dense ones", () => {
    // Ids from before the cluster (1, 2, 3, ...) and then the market's slot 7 ids (writer.ts).
    const strided = commands.map((cmd, i) => (i < 1_000 ? cmd : { ...cmd, id: cmd.id * 1_024 + 7 }));
    const engine = new MatchingEngine({ ...spec, idStride: 1_024 });
    run(engine, strided);
    const snapshot = engine.snapshot();
    const closed = snapshot.filled.length + snapshot.cancelled.length;
    expect(closed).toBeGreaterThan(1_500);
    const bytes = encodeSnapshot(snapshot);
    expect(decodeSnapshot(bytes)).toEqual(snapshot);
    // One run over the ids would take 256 bytes per closed id of the cluster's part.
    const live = snapshot.book.length + snapshot.stops.length;
    expect(bytes.length).toBeLessThan(2_000 + live * 50 + closed + 1_024 * 30);
    const restored = MatchingEngine.restore(spec, decodeSnapshot(bytes));
    expect(restored.snapshot()).toEqual(snapshot);
  });

  it('reads snapshots stored in the format before (one run of closed statuses)', () => {
    const engine = new MatchingEngine(spec);
    run(engine, commands.slice(0, 2_000));
    const snapshot = engine.snapshot();
    // Format 1 as it was written until 29 Nov: the same, with one run from closedFrom.
    const current = encodeSnapshot(snapshot);
    const headerLength = current.readUInt32LE(5);
    const header = JSON.parse(current.toString('utf8', 9, 9 + headerLength)) as Record<string, unknown>;
    const ids = [...snapshot.filled, ...snapshot.cancelled];
    const from = Math.min(...ids);
    const count = Math.max(...ids) - from + 1;
    const statuses = Buffer.alloc(Math.ceil(count / 4));
    for (const [list, status] of [
      [snapshot.filled, 1],
      [snapshot.cancelled, 2],
    ] as const) {
      for (const id of list) statuses[(id - from) >> 2]! |= status << (((id - from) & 3) << 1);
    }
    const { closedStride: _s, closedGroups: _g, ...rest } = header;
    const oldHeader = Buffer.from(JSON.stringify({ ...rest, closedFrom: from, closedIds: count }), 'utf8');
    const prefix = Buffer.alloc(9);
    prefix.write('EXSN', 0, 'latin1');
    prefix.writeUInt8(1, 4);
    prefix.writeUInt32LE(oldHeader.length, 5);
    // Orders of format 3 are 54 bytes: the first 45 are the order of formats 1 and 2.
    const live = snapshot.book.length + snapshot.stops.length;
    const orders = Buffer.concat(
      Array.from({ length: live }, (_, i) =>
        current.subarray(9 + headerLength + i * 54, 9 + headerLength + i * 54 + 45),
      ),
    );
    const content = Buffer.concat([prefix, oldHeader, orders, statuses]);
    const old = Buffer.concat([content, createHash('sha256').update(content).digest()]);
    const strip = ({ filled: _f, stp: _p, ...order }: (typeof snapshot.book)[number]) => order;
    const decoded = decodeSnapshot(old);
    expect(decoded).toEqual({
      ...snapshot,
      version: 1,
      book: snapshot.book.map(strip),
      stops: snapshot.stops.map(strip),
    });
    // A version 1 snapshot still loads; its orders' filled part is unknown, so only their price can be amended.
    const restored = MatchingEngine.restore(spec, decoded);
    const open = decoded.book[0];
    if (open !== undefined) {
      const amend = restored.apply({ type: 'amend', id: open.id, amount: 10_000n, time: 1 });
      expect(amend.ok === false && amend.code).toBe('ORDER_NOT_AMENDABLE');
    }
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
