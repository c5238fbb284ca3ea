/**
 * The binary form of an engine snapshot stored in `book_snapshots`: about 45 bytes per live order
 * and 2 bits per closed order id, where the JSON form (matching/snapshot.ts) takes about 120 bytes
 * per order and 8 per id. Layout, little-endian:
 *
 *   "EXSN" | u8 format | u32 header length | header (UTF-8 JSON) | live orders | closed statuses | sha256
 *
 * The header holds the counters, the account names (orders refer to them by index) and the counts.
 * A live order is id f64, account u32, side u8 (0 buy, 1 sell), price f64, stop price f64 (0: none),
 * remaining f64, time f64, and since format 3 filled f64 (-1: unknown) and stp u8 (STP_MODES index); book orders first, then stops, each in priority order as captured. Closed
 * statuses are 2 bits per id (1 filled, 2 cancelled, 0 not closed) in runs: format 2 groups the ids by
 * their residue modulo `closedStride` and keeps, per group `[residue, from, count]`, a run over the
 * quotients `from .. from + count - 1` (id = quotient * stride + residue); format 1 (still read) had
 * one run from `closedFrom`. A cluster's market numbers its ids one residue modulo 1024
 * (orders/writer.ts), where one run over the ids would take 256 bytes per closed order and a
 * snapshot of a few million orders would pass PostgreSQL's 1 GB limit of a value; the encoder takes
 * whichever of stride 1 and 1024 is smaller. The trailing SHA-256 covers everything before it, so a
 * torn or altered snapshot is refused rather than loaded.
 */
import { createHash } from 'node:crypto';
import type { EngineSnapshot, SnapshotOrder } from '../matching/snapshot.js';
import { STP_MODES } from '../matching/types.js';

const MAGIC = 'EXSN';
const FORMAT = 3;
/** Format 2 (still read): grouped closed statuses, orders without `filled` and `stp`. */
const FORMAT_GROUPED = 2;
/** The format before closed statuses were grouped by residue: one run from `closedFrom`. */
const FORMAT_ONE_RUN = 1;
/** Strides the encoder tries for the closed statuses: ids as they are, and a cluster's (ID_STRIDE). */
const CLOSED_STRIDES = [1, 1024];
/** Formats 1 and 2; format 3 adds filled f64 and the stp mode u8 (index in STP_MODES). */
const ORDER_BYTES_OLD = 8 + 4 + 1 + 8 + 8 + 8 + 8;
const ORDER_BYTES = ORDER_BYTES_OLD + 8 + 1;
const DIGEST_BYTES = 32;

interface Header {
  readonly market: string;
  readonly seq: number;
  readonly maxId: number;
  readonly tradeSeq: number;
  readonly lastPrice: string | null;
  readonly accounts: readonly string[];
  readonly book: number;
  readonly stops: number;
  /** Format 2: the stride the closed statuses are grouped by, and the groups. */
  readonly closedStride?: number;
  readonly closedGroups?: readonly ClosedGroup[];
  /** Format 1: the one run of closed statuses. */
  readonly closedFrom?: number;
  readonly closedIds?: number;
}

/** The closed ids of one residue: `[residue, first quotient, quotients]`. */
type ClosedGroup = [residue: number, from: number, count: number];

/** The closed ids grouped by residue modulo `stride`, ascending by residue. */
function groupsOf(lists: readonly (readonly number[])[], stride: number): ClosedGroup[] {
  const bounds = new Map<number, [number, number]>();
  for (const ids of lists) {
    for (const id of ids) {
      const residue = id % stride;
      const q = (id - residue) / stride;
      const seen = bounds.get(residue);
      if (seen === undefined) bounds.set(residue, [q, q]);
      else if (q < seen[0]) seen[0] = q;
      else if (q > seen[1]) seen[1] = q;
    }
  }
  return [...bounds]
    .sort((a, b) => a[0] - b[0])
    .map(([residue, [from, to]]) => [residue, from, to - from + 1]);
}

/** Bytes the statuses of `groups` take, with their share of the header. */
function groupBytes(groups: readonly ClosedGroup[]): number {
  return groups.reduce((sum, [, , count]) => sum + Math.ceil(count / 4) + 24, 0);
}

export class CorruptSnapshot extends Error {
  constructor(reason: string) {
    super(`corrupt book snapshot: ${reason}`);
    this.name = 'CorruptSnapshot';
  }
}

export function encodeSnapshot(snapshot: EngineSnapshot): Buffer {
  const accounts: string[] = [];
  const accountIndex = new Map<string, number>();
  const indexOf = (name: string): number => {
    let index = accountIndex.get(name);
    if (index === undefined) {
      index = accounts.length;
      accounts.push(name);
      accountIndex.set(name, index);
    }
    return index;
  };
  const orders = [...snapshot.book, ...snapshot.stops];
  const body = Buffer.allocUnsafe(orders.length * ORDER_BYTES);
  let at = 0;
  for (const order of orders) {
    body.writeDoubleLE(order.id, at);
    body.writeUInt32LE(indexOf(order.account), at + 8);
    body.writeUInt8(order.side === 'buy' ? 0 : 1, at + 12);
    body.writeDoubleLE(Number(order.price), at + 13);
    body.writeDoubleLE(order.stopPrice === null ? 0 : Number(order.stopPrice), at + 21);
    body.writeDoubleLE(Number(order.remaining), at + 29);
    body.writeDoubleLE(order.time, at + 37);
    body.writeDoubleLE(order.filled === undefined ? -1 : Number(order.filled), at + 45);
    body.writeUInt8(order.stp === undefined ? 0 : STP_MODES.indexOf(order.stp), at + 53);
    at += ORDER_BYTES;
  }
  const lists = [snapshot.filled, snapshot.cancelled];
  let closedStride = 1;
  let closedGroups: ClosedGroup[] = [];
  for (const stride of CLOSED_STRIDES) {
    const groups = groupsOf(lists, stride);
    if (stride === CLOSED_STRIDES[0] || groupBytes(groups) < groupBytes(closedGroups)) {
      closedStride = stride;
      closedGroups = groups;
    }
  }
  // Where each group's run starts in the statuses.
  const runStart = new Map<number, { at: number; from: number }>();
  let size = 0;
  for (const [residue, from, count] of closedGroups) {
    runStart.set(residue, { at: size, from });
    size += Math.ceil(count / 4);
  }
  const closed = Buffer.alloc(size);
  const mark = (ids: readonly number[], status: number) => {
    for (const id of ids) {
      const residue = id % closedStride;
      const run = runStart.get(residue)!;
      const slot = (id - residue) / closedStride - run.from;
      closed[run.at + (slot >> 2)]! |= status << ((slot & 3) << 1);
    }
  };
  mark(snapshot.filled, 1);
  mark(snapshot.cancelled, 2);
  const header: Header = {
    market: snapshot.market,
    seq: snapshot.seq,
    maxId: snapshot.maxId,
    tradeSeq: snapshot.tradeSeq,
    lastPrice: snapshot.lastPrice,
    accounts,
    book: snapshot.book.length,
    stops: snapshot.stops.length,
    closedStride,
    closedGroups,
  };
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const prefix = Buffer.alloc(9);
  prefix.write(MAGIC, 0, 'latin1');
  prefix.writeUInt8(FORMAT, 4);
  prefix.writeUInt32LE(headerBytes.length, 5);
  const content = Buffer.concat([prefix, headerBytes, body, closed]);
  return Buffer.concat([content, createHash('sha256').update(content).digest()]);
}

/** The snapshot `bytes` hold; throws CorruptSnapshot when they are torn, altered or not a snapshot. */
export function decodeSnapshot(bytes: Uint8Array): EngineSnapshot {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (data.length < 9 + DIGEST_BYTES) throw new CorruptSnapshot(`only ${data.length} bytes`);
  const content = data.subarray(0, data.length - DIGEST_BYTES);
  const digest = createHash('sha256').update(content).digest();
  if (!digest.equals(data.subarray(data.length - DIGEST_BYTES)))
    throw new CorruptSnapshot('checksum mismatch');
  const format = content.readUInt8(4);
  if (
    content.toString('latin1', 0, 4) !== MAGIC ||
    (format !== FORMAT && format !== FORMAT_GROUPED && format !== FORMAT_ONE_RUN)
  ) {
    throw new CorruptSnapshot('unknown format');
  }
  const headerLength = content.readUInt32LE(5);
  const header = JSON.parse(content.toString('utf8', 9, 9 + headerLength)) as Header;
  const grouped = format !== FORMAT_ONE_RUN;
  const orderBytes = format === FORMAT ? ORDER_BYTES : ORDER_BYTES_OLD;
  const stride = grouped ? (header.closedStride ?? 1) : 1;
  const groups: readonly ClosedGroup[] = grouped
    ? (header.closedGroups ?? [])
    : header.closedIds
      ? [[0, header.closedFrom ?? 0, header.closedIds]]
      : [];
  let at = 9 + headerLength;
  const count = header.book + header.stops;
  const statusBytes = groups.reduce((sum, [, , n]) => sum + Math.ceil(n / 4), 0);
  if (content.length !== at + count * orderBytes + statusBytes) {
    throw new CorruptSnapshot('length does not match its header');
  }
  const orders: SnapshotOrder[] = new Array(count);
  for (let i = 0; i < count; i += 1) {
    const account = header.accounts[content.readUInt32LE(at + 8)];
    if (account === undefined) throw new CorruptSnapshot('unknown account index');
    const stop = content.readDoubleLE(at + 21);
    const order: SnapshotOrder = {
      id: content.readDoubleLE(at),
      account,
      side: content.readUInt8(at + 12) === 0 ? 'buy' : 'sell',
      price: String(content.readDoubleLE(at + 13)),
      stopPrice: stop === 0 ? null : String(stop),
      remaining: String(content.readDoubleLE(at + 29)),
      time: content.readDoubleLE(at + 37),
    };
    if (format !== FORMAT) orders[i] = order;
    else {
      const stp = STP_MODES[content.readUInt8(at + 53)];
      if (stp === undefined) throw new CorruptSnapshot('unknown self-trade prevention mode');
      const filled = String(content.readDoubleLE(at + 45));
      orders[i] = stp === 'expire_maker' ? { ...order, filled } : { ...order, filled, stp };
    }
    at += orderBytes;
  }
  const filled: number[] = [];
  const cancelled: number[] = [];
  for (const [residue, from, n] of groups) {
    for (let slot = 0; slot < n; slot += 1) {
      const status = (content[at + (slot >> 2)]! >> ((slot & 3) << 1)) & 3;
      if (status === 1) filled.push((from + slot) * stride + residue);
      else if (status === 2) cancelled.push((from + slot) * stride + residue);
    }
    at += Math.ceil(n / 4);
  }
  // Ascending by id, as the engine lists them (runs of different residues interleave).
  if (groups.length > 1) {
    filled.sort((a, b) => a - b);
    cancelled.sort((a, b) => a - b);
  }
  return {
    version: format === FORMAT ? 2 : 1,
    market: header.market,
    seq: header.seq,
    maxId: header.maxId,
    tradeSeq: header.tradeSeq,
    lastPrice: header.lastPrice,
    book: orders.slice(0, header.book),
    stops: orders.slice(header.book),
    filled,
    cancelled,
  };
}
