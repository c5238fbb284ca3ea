import { describe, expect, it } from 'vitest';
import { FanOutPace } from '../../src/feed/fan-out-pace.js';
import { Outbox } from '../../src/feed/outbox.js';
import type { Peer } from '../../src/feed/peer.js';
import { PeerSet } from '../../src/feed/peer-set.js';
import { textFrame } from '../../src/feed/ws-frame.js';

/** A connection that records what it was written. */
function recorder(name: string) {
  const writes: Buffer[] = [];
  const payloads: string[] = [];
  const peer: Peer = {
    deliver: (frame) => payloads.push(frame.toString()),
    deliverFramed: (frames, sent) => {
      writes.push(...frames);
      payloads.push(...sent.map((p) => p.toString()));
    },
    close: () => {},
  };
  return { name, peer, writes, payloads };
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('fan-out (pure parts and the outbox)', () => {
  it('a WebSocket text frame: FIN and opcode 1, the length in 7, 16 or 64 bits, unmasked', () => {
    for (const [length, header] of [
      [0, [0x81, 0]],
      [125, [0x81, 125]],
      [126, [0x81, 126, 0, 126]],
      [65_535, [0x81, 126, 255, 255]],
      [65_536, [0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0]],
    ] as const) {
      const payload = Buffer.alloc(length, 0x61);
      const frame = textFrame(payload);
      expect([...frame.subarray(0, header.length)], String(length)).toEqual(header);
      expect(frame.subarray(header.length).equals(payload)).toBe(true);
    }
  });

  it('each connection gets its frames in order, once, in one write; the same frames are the same bytes for all', async () => {
    const a = recorder('a');
    const b = recorder('b');
    const c = recorder('c');
    const book = new PeerSet([a.peer, b.peer]);
    const trades = new PeerSet([a.peer, b.peer, c.peer]);
    let made = 0;
    const outbox = new Outbox(2, () => {});
    outbox.push(Buffer.from('book 1'), book.list());
    outbox.push(Buffer.from('trades 1'), trades.list());
    outbox.push(() => {
      made += 1;
      return 'snapshot for c';
    }, [c.peer]);
    outbox.push(Buffer.from('book 2'), book.list());
    await settled();
    expect(a.payloads).toEqual(['book 1', 'trades 1', 'book 2']);
    expect(b.payloads).toEqual(a.payloads);
    expect(c.payloads).toEqual(['trades 1', 'snapshot for c']);
    expect(made).toBe(1);
    // One write per connection; a and b (the same lists) were written the very same buffer.
    expect([a.writes.length, b.writes.length, c.writes.length]).toEqual([1, 1, 1]);
    expect(a.writes[0]).toBe(b.writes[0]);
    expect(
      a.writes[0]!.equals(
        Buffer.concat(['book 1', 'trades 1', 'book 2'].map((t) => textFrame(Buffer.from(t)))),
      ),
    ).toBe(true);
    // A list of followers is the same object until the set changes.
    const before = book.list();
    expect(book.list()).toBe(before);
    book.delete(b.peer);
    expect(book.list()).not.toBe(before);
    expect(book.list()).toEqual([a.peer]);
  });

  it('pace: after a round, the next waits until the process spent its share’s worth elsewhere, or the longest delay', () => {
    let cpu = 0;
    let now = 0;
    const pace = new FanOutPace(
      0.25,
      100,
      () => cpu,
      () => now,
    );
    expect(pace.wait()).toBe(0);
    // A round of 10 ms of CPU: 30 ms of other work before the next (a quarter of the CPU for the fan-out).
    pace.ended(10_000);
    expect(pace.wait()).toBeGreaterThan(0);
    cpu += 29_000;
    now += 40;
    expect(pace.wait()).toBeGreaterThan(0);
    cpu += 1_000;
    expect(pace.wait()).toBe(0);
    // An idle process: at most the longest delay (here 100 ms).
    pace.ended(10_000);
    now += 99;
    expect(pace.wait()).toBeGreaterThan(0);
    now += 1;
    expect(pace.wait()).toBe(0);
    // A cheap round waits at most ten times its share's worth of wall time.
    pace.ended(100);
    now += 3;
    expect(pace.wait()).toBe(0);
    expect(
      new FanOutPace(
        1,
        100,
        () => cpu,
        () => now,
      ).wait(),
    ).toBe(0);
  });
});
