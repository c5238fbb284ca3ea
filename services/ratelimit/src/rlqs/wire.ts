/**
 * RateLimitQuotaUsageReports read and RateLimitQuotaResponse written by hand, on the field numbers
 * of Envoy's rlqs.proto (reports: domain 1, bucket_quota_usages 2; a usage: bucket_id 1,
 * time_elapsed 2 (Duration: seconds 1, nanos 2), num_requests_allowed 3, num_requests_denied 4;
 * BucketId: bucket 1, a map entry of key 1 and value 2; response: bucket_action 1; BucketAction:
 * bucket_id 1, quota_assignment_action 2, abandon_action 3).
 *
 * Why by hand: a usage's bucket id is kept as the bytes Envoy sent (`wireId`, a latin1 string):
 * Envoy sends the same bucket with the same bytes at every report, so a known bucket is found by
 * one map lookup, with no map object decoded and no canonical key built, and the answer echoes
 * those bytes as its bucket_id. protobufjs' decoder built a map object and two Longs per usage
 * (a third of a 10,000-bucket report's CPU). Unknown fields are skipped; malformed bytes throw.
 */
import type { BucketId, BucketUsage, UsageReports } from './protos.js';

class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  varint(): number {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new Error('rlqs: truncated varint');
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 128;
    }
    throw new Error('rlqs: varint too long');
  }

  /** The end offset of a length-delimited field starting here. */
  delimited(): number {
    const len = this.varint();
    const end = this.pos + len;
    if (end > this.end) throw new Error('rlqs: truncated field');
    return end;
  }

  /**
   * A signed 64-bit varint (Duration's int64 seconds, int32 nanos: a negative value is ten bytes of
   * two's complement), read in two 32-bit halves so that the sign is exact, as protobufjs' Long is.
   */
  signedVarint(): number {
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new Error('rlqs: truncated varint');
      const b = this.buf[this.pos++]!;
      const bits = b & 0x7f;
      if (i < 4) lo |= bits << (7 * i);
      else if (i === 4) {
        lo |= bits << 28;
        hi |= bits >>> 4;
      } else hi |= bits << (7 * i - 32);
      if (b < 0x80) {
        lo >>>= 0;
        if (hi & 0x80000000) return -((~lo >>> 0) + 1 + (~hi >>> 0) * 0x100000000);
        return lo + (hi >>> 0) * 0x100000000;
      }
    }
    throw new Error('rlqs: varint too long');
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 3: {
        // A group (deprecated, but a valid unknown field): skipped up to its end-group tag. Nested
        // groups are counted, not recursed into: a message of nothing but group starts (a few MB of
        // them) would otherwise overflow the stack instead of failing as truncated.
        let depth = 1;
        while (depth > 0) {
          const type = this.varint() & 7;
          if (type === 3) depth += 1;
          else if (type === 4) depth -= 1;
          else this.skip(type);
        }
        return;
      }
      case 0:
        this.varint();
        return;
      case 1:
        this.pos += 8;
        break;
      case 2:
        this.pos = this.delimited();
        return;
      case 5:
        this.pos += 4;
        break;
      default:
        throw new Error(`rlqs: wire type ${wireType} not supported`);
    }
    if (this.pos > this.end) throw new Error('rlqs: truncated field');
  }
}

/** One usage; its bucket id map is decoded only when asked (a bucket seen before is found by `wireId`). */
class WireUsage implements BucketUsage {
  private decoded: BucketId | undefined;
  constructor(
    readonly wireId: string,
    readonly timeElapsedMs: number,
    readonly allowed: number,
    readonly denied: number,
    /** The report's bytes and where the bucket_id is in them (decoded from there when asked). */
    private readonly source: Buffer,
    private readonly idStart: number,
  ) {}

  get bucketId(): BucketId {
    this.decoded ??= decodeBucketId(this.source, this.idStart, this.idStart + this.wireId.length);
    return this.decoded;
  }
}

/** The last bucket-id key decoded and its bytes (a copy: the report's buffer is not kept alive). */
let lastKey = '';
let lastKeyBytes = new Uint8Array(0);
const KEY_CACHE_MAX_BYTES = 64;

/**
 * A bucket-id key at `buf[start, end)`: the ids of one report mostly share their keys (`name`, a
 * header's name), so the string of the previous key is handed out again when the bytes are the
 * same: no string per bucket for it, and the maps and property lookups see one string.
 */
function keyAt(buf: Buffer, start: number, end: number): string {
  const n = end - start;
  if (n === lastKeyBytes.length) {
    let i = 0;
    while (i < n && buf[start + i] === lastKeyBytes[i]) i++;
    if (i === n) return lastKey;
  }
  const key = buf.toString('utf8', start, end);
  if (n <= KEY_CACHE_MAX_BYTES) {
    lastKeyBytes = Uint8Array.prototype.slice.call(buf, start, end);
    lastKey = key;
  }
  return key;
}

/** A BucketId message's map (a later duplicate key wins, as protobuf's maps do). */
export function decodeBucketId(buf: Buffer, start = 0, end = buf.length): BucketId {
  const out: Record<string, string> = {};
  const r = new Reader(buf, start, end);
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag !== 0x0a) {
      r.skip(tag & 7);
      continue;
    }
    const end = r.delimited();
    let key = '';
    let value = '';
    while (r.pos < end) {
      const t = r.varint();
      if (t === 0x0a || t === 0x12) {
        const e = r.delimited();
        if (t === 0x0a) key = keyAt(buf, r.pos, e);
        else value = buf.toString('utf8', r.pos, e);
        r.pos = e;
      } else r.skip(t & 7);
    }
    if (r.pos !== end) throw new Error('rlqs: malformed map entry');
    // A key `__proto__` (a request header's name, say) stays an own key, not the object's prototype.
    if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true });
    else out[key] = value;
  }
  return out;
}

function usageAt(r: Reader, end: number): BucketUsage {
  let wireId = '';
  let idStart = 0;
  let elapsed = 0;
  let allowed = 0;
  let denied = 0;
  while (r.pos < end) {
    const tag = r.varint();
    switch (tag) {
      case 0x0a: {
        const e = r.delimited();
        wireId = r.buf.toString('latin1', r.pos, e);
        idStart = r.pos;
        r.pos = e;
        break;
      }
      case 0x12: {
        const e = r.delimited();
        let seconds = 0;
        let nanos = 0;
        while (r.pos < e) {
          const t = r.varint();
          if (t === 0x08) seconds = r.signedVarint();
          else if (t === 0x10) nanos = r.signedVarint();
          else r.skip(t & 7);
        }
        if (r.pos !== e) throw new Error('rlqs: malformed duration');
        // int32 nanos: the low 32 bits, as protobufjs reads them.
        elapsed = seconds * 1000 + Math.trunc((nanos | 0) / 1e6);
        break;
      }
      case 0x18:
        allowed = r.varint();
        break;
      case 0x20:
        denied = r.varint();
        break;
      default:
        r.skip(tag & 7);
    }
  }
  if (r.pos !== end) throw new Error('rlqs: malformed usage');
  return new WireUsage(wireId, elapsed, allowed, denied, r.buf, idStart);
}

/** Decodes a binary RateLimitQuotaUsageReports; throws on malformed protobuf. */
export function decodeUsageReports(bytes: Uint8Array): UsageReports {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const r = new Reader(buf);
  let domain = '';
  const usages: BucketUsage[] = [];
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag === 0x0a) {
      const e = r.delimited();
      domain = buf.toString('utf8', r.pos, e);
      r.pos = e;
    } else if (tag === 0x12) {
      const e = r.delimited();
      usages.push(usageAt(r, e));
    } else r.skip(tag & 7);
  }
  return { domain, usages };
}

function varintSize(n: number): number {
  let size = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

function writeVarint(buf: Buffer, pos: number, n: number): number {
  while (n >= 128) {
    buf[pos++] = (n % 128) | 0x80;
    n = Math.floor(n / 128);
  }
  buf[pos++] = n;
  return pos;
}

/** An encoded BucketId of `bucket`'s pairs. */
export function encodeBucketId(bucket: BucketId): Buffer {
  const parts: Buffer[] = [];
  for (const key of Object.keys(bucket)) {
    const k = Buffer.from(key, 'utf8');
    const v = Buffer.from(bucket[key]!, 'utf8');
    const entryLen = 1 + varintSize(k.length) + k.length + 1 + varintSize(v.length) + v.length;
    const entry = Buffer.allocUnsafe(1 + varintSize(entryLen) + entryLen);
    let p = writeVarint(entry, 0, 0x0a);
    p = writeVarint(entry, p, entryLen);
    entry[p++] = 0x0a;
    p = writeVarint(entry, p, k.length);
    p += k.copy(entry, p);
    entry[p++] = 0x12;
    p = writeVarint(entry, p, v.length);
    v.copy(entry, p);
    parts.push(entry);
  }
  return Buffer.concat(parts);
}

/**
 * One BucketAction's parts: the bucket_id bytes (or the latin1 string of them, as `wireId`), and
 * the assignment's bytes (undefined: abandon).
 */
export interface ActionParts {
  readonly id: Uint8Array | string;
  readonly assignment: Uint8Array | undefined;
}

/** A RateLimitQuotaResponse of `actions`, written into one buffer. */
export function encodeResponse(actions: readonly ActionParts[]): Buffer {
  let total = 0;
  const lens = new Array<number>(actions.length);
  for (let i = 0; i < actions.length; i++) {
    const a = actions[i]!;
    const len =
      1 +
      varintSize(a.id.length) +
      a.id.length +
      (a.assignment ? 1 + varintSize(a.assignment.length) + a.assignment.length : 2);
    lens[i] = len;
    total += 1 + varintSize(len) + len;
  }
  const buf = Buffer.allocUnsafe(total);
  let p = 0;
  for (let i = 0; i < actions.length; i++) {
    const a = actions[i]!;
    buf[p++] = 0x0a;
    p = writeVarint(buf, p, lens[i]!);
    buf[p++] = 0x0a;
    p = writeVarint(buf, p, a.id.length);
    if (typeof a.id === 'string') buf.write(a.id, p, a.id.length, 'latin1');
    else buf.set(a.id, p);
    p += a.id.length;
    if (a.assignment) {
      buf[p++] = 0x12;
      p = writeVarint(buf, p, a.assignment.length);
      buf.set(a.assignment, p);
      p += a.assignment.length;
    } else {
      buf[p++] = 0x1a;
      buf[p++] = 0;
    }
  }
  return buf;
}
