import { describe, expect, it } from 'vitest';
import { BookFollower } from '../../src/feed/book-follower.js';
import { diffBooks, groupBook, wireSide } from '../../src/feed/book-levels.js';
import { MessageBudget } from '../../src/feed/message-budget.js';
import { parseClientFrame } from '../../src/feed/protocol.js';
import { tradingMarkets } from '../../src/orders/markets.js';
import { reference } from '../support/targets.js';

const btcusdt = tradingMarkets(reference, { makerFeePpm: 0, takerFeePpm: 0 }).get('btcusdt')!;

describe('feed book levels (pure)', () => {
  it('groups to display_precision like GET /v3/book: bids down, asks up, volumes and orders summed', () => {
    // btcusdt: prices in cents, display 1 decimal: groups of 10 cents.
    const book = groupBook(btcusdt, {
      bids: [
        [3_700_019n, 10n, 1],
        [3_700_011n, 5n, 2],
        [3_700_009n, 1n, 1],
      ],
      asks: [
        [3_700_021n, 7n, 1],
        [3_700_030n, 3n, 1],
      ],
      lastPrice: null,
    });
    expect(wireSide(btcusdt, book.bids, true)).toEqual([
      [37000.1, 0.000015, 3],
      [37000, 0.000001, 1],
    ]);
    expect(wireSide(btcusdt, book.asks, false)).toEqual([[37000.3, 0.00001, 2]]);
  });

  it('diffs: changed and new levels with their values, removed levels with volume 0, nothing when equal', () => {
    const before = groupBook(btcusdt, {
      bids: [
        [100n, 5n, 1],
        [90n, 5n, 1],
      ],
      asks: [[120n, 1n, 1]],
      lastPrice: null,
    });
    const after = groupBook(btcusdt, {
      bids: [
        [100n, 7n, 2],
        [80n, 1n, 1],
      ],
      asks: [[120n, 1n, 1]],
      lastPrice: null,
    });
    expect(diffBooks(before, after)).toEqual({
      bids: [
        [100n, 7n, 2],
        [80n, 1n, 1],
        [90n, 0n, 0],
      ],
      asks: [],
    });
    expect(diffBooks(after, after)).toBeUndefined();
  });
});

describe('BookFollower (the client side of the book channel)', () => {
  it('applies a snapshot and consecutive diffs, skips stale ones, reports a gap, then waits for a fresh snapshot', () => {
    const follower = new BookFollower();
    expect(follower.apply({ event: 'diff', seq: 1, bids: [], asks: [] })).toBe('waiting');
    follower.apply({ event: 'snapshot', seq: 4, bids: [[10, 1, 1]], asks: [[12, 2, 1]] });
    expect(follower.apply({ event: 'diff', seq: 5, bids: [[11, 3, 1]], asks: [[12, 0, 0]] })).toBe('applied');
    expect(follower.restBook()).toEqual([
      [11, 3, 1],
      [10, 1, 1],
    ]);
    expect(follower.apply({ event: 'diff', seq: 5, bids: [[11, 9, 9]], asks: [] })).toBe('stale');
    expect(follower.apply({ event: 'diff', seq: 7, bids: [], asks: [] })).toBe('gap');
    expect(follower.lastSeq).toBeUndefined();
    expect(follower.apply({ event: 'diff', seq: 8, bids: [], asks: [] })).toBe('waiting');
    follower.apply({ event: 'snapshot', seq: 8, bids: [], asks: [[13, 1, 1]] });
    expect(follower.restBook()).toEqual([[13, -1, 1]]);
  });

  it('with the log’s numbers: a diff applies when its prev_seq is not past the last seq, else it is a gap', () => {
    const follower = new BookFollower();
    follower.apply({ event: 'snapshot', seq: 40, bids: [[10, 1, 1]], asks: [] });
    // A batch of three commands after 40.
    expect(follower.apply({ event: 'diff', seq: 43, prev_seq: 40, bids: [[11, 2, 1]], asks: [] })).toBe(
      'applied',
    );
    expect(follower.apply({ event: 'diff', seq: 43, prev_seq: 40, bids: [], asks: [] })).toBe('stale');
    // A diff that starts before the client's last seq and ends after it sets whole levels: it applies.
    expect(follower.apply({ event: 'diff', seq: 45, prev_seq: 42, bids: [[11, 0, 0]], asks: [] })).toBe(
      'applied',
    );
    expect(follower.restBook()).toEqual([[10, 1, 1]]);
    // Batches 45-50 never arrived.
    expect(follower.apply({ event: 'diff', seq: 52, prev_seq: 50, bids: [], asks: [] })).toBe('gap');
    expect(follower.lastSeq).toBeUndefined();
  });
});

describe('MessageBudget', () => {
  it('allows a burst, then the rate, refilled by the clock passed in', () => {
    const budget = new MessageBudget(10, 3, 0);
    expect([budget.take(0), budget.take(0), budget.take(0), budget.take(0)]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(budget.take(50)).toBe(false);
    expect(budget.take(100)).toBe(true);
    expect(budget.take(100_000)).toBe(true);
  });
});

describe('parseClientFrame', () => {
  it('accepts the documented frames', () => {
    expect(parseClientFrame('{"op":"subscribe","channel":"book","market":"BTCUSDT","id":3}')).toEqual({
      ok: true,
      frame: { op: 'subscribe', id: 3, subscription: { channel: 'book', market: 'btcusdt' } },
    });
    expect(parseClientFrame('{"op":"subscribe","channel":"orders"}')).toEqual({
      ok: true,
      frame: { op: 'subscribe', subscription: { channel: 'orders' } },
    });
    expect(parseClientFrame('{"op":"ping"}')).toEqual({ ok: true, frame: { op: 'ping' } });
    expect(
      parseClientFrame('{"op":"subscribe","channel":"book_l3","market":"btcusdt","from_seq":12}'),
    ).toEqual({
      ok: true,
      frame: { op: 'subscribe', subscription: { channel: 'book_l3', market: 'btcusdt' }, fromSeq: 12 },
    });
    expect(parseClientFrame('{"op":"subscribe","channel":"fills","from_seqs":{"BTCUSDT":7}}')).toEqual({
      ok: true,
      frame: { op: 'subscribe', subscription: { channel: 'fills' }, fromSeqs: { btcusdt: 7 } },
    });
    expect(
      parseClientFrame('{"op":"subscribe","channel":"candles","market":"btcusdt","resolution":"1m"}'),
    ).toEqual({
      ok: true,
      frame: { op: 'subscribe', subscription: { channel: 'candles', market: 'btcusdt', resolution: '1m' } },
    });
    // An order operation: its id (integer or string) and params; an amount the JSON number reading
    // of a double would round stays its text, as in a REST body.
    expect(
      parseClientFrame('{"op":"order.submit","id":"a-1","params":{"amount":0.99999999999999999}}'),
    ).toEqual({
      ok: true,
      frame: { op: 'order', name: 'order.submit', id: 'a-1', params: { amount: '0.99999999999999999' } },
    });
  });

  it('refuses malformed frames, unknown ops and channels, with the id when there is one', () => {
    const name = (text: string) => {
      const parsed = parseClientFrame(text);
      return parsed.ok ? 'ok' : parsed.error.name;
    };
    expect(name('not json')).toBe('malformed_frame');
    expect(name('[1,2]')).toBe('malformed_frame');
    expect(name('null')).toBe('malformed_frame');
    expect(name('{"op":"ping","id":"x"}')).toBe('malformed_frame');
    expect(name('{"op":"dance"}')).toBe('unknown_op');
    expect(name('{"op":"subscribe","channel":"depth","market":"btcusdt"}')).toBe('unknown_channel');
    expect(name('{"op":"subscribe","channel":"candles","market":"btcusdt"}')).toBe('malformed_frame');
    expect(name('{"op":"subscribe","channel":"candles","market":"btcusdt","resolution":"2m"}')).toBe(
      'malformed_frame',
    );
    expect(name('{"op":"subscribe","channel":"ticker","market":"btcusdt","from_seq":3}')).toBe(
      'malformed_frame',
    );
    expect(name('{"op":"subscribe","channel":"book","market":"btcusdt","from_seq":-1}')).toBe(
      'malformed_frame',
    );
    expect(name('{"op":"subscribe","channel":"book","market":"btcusdt","from_seqs":{"btcusdt":1}}')).toBe(
      'malformed_frame',
    );
    expect(name('{"op":"subscribe","channel":"orders","from_seq":1}')).toBe('malformed_frame');
    expect(name('{"op":"subscribe","channel":"orders","from_seqs":{}}')).toBe('malformed_frame');
    expect(name('{"op":"subscribe","channel":"fills","from_seqs":{"btcusdt":"1"}}')).toBe('malformed_frame');
    expect(name('{"op":"order.submit","params":{}}')).toBe('malformed_frame');
    expect(name('{"op":"order.submit","id":1,"params":[]}')).toBe('malformed_frame');
    expect(name('{"op":"subscribe","channel":"book"}')).toBe('malformed_frame');
    expect(name('{"op":"auth","key":"k","nonce":"1"}')).toBe('missing_credentials');
    expect(parseClientFrame('{"op":"subscribe","channel":"x","id":9}')).toMatchObject({ ok: false, id: 9 });
  });

  it('refuses __proto__ and constructor.prototype keys anywhere in a frame, as a REST body does', () => {
    for (const text of [
      '{"op":"subscribe","channel":"fills","from_seqs":{"__proto__":1}}',
      '{"op":"order.submit","id":1,"params":{"symbol":"btcusdt","__proto__":{"admin":true}}}',
      '{"op":"order.submit","id":1,"params":{"constructor":{"prototype":{"x":1}}}}',
    ]) {
      const parsed = parseClientFrame(text);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) {
        expect(parsed.error.name).toBe('malformed_frame');
        expect(parsed.error.message).toMatch(/the key "(__proto__|constructor\.prototype)" is not allowed/);
      }
    }
  });
});
