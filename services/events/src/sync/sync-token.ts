/**
 * Sync and page tokens of `GET /events/sync`: positions in the change log, sealed with AES-256-GCM
 * under a key every instance shares (`events_keys`), so a token is opaque (it does not reveal how
 * many changes the service has seen, PRIVATE ones included) and any edit makes it unreadable.
 * Pure: the key and the clock are arguments.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** Whose view a token was made for: anonymous, a signed-in user, or any member. */
export type ViewerKey = string;

export type SyncPosition =
  /** `next_sync_token`: every change up to `seq` is in the caller's copy. */
  | { kind: 'sync'; seq: bigint; viewer: ViewerKey; issuedAt: number }
  /** A page of a full sync: events after `after` (event id order); it ends at change `upto`. */
  | { kind: 'full'; upto: bigint; after: string; viewer: ViewerKey; issuedAt: number }
  /** A page of an incremental sync from `from` to `upto`, after change `after`. */
  | { kind: 'delta'; from: bigint; upto: bigint; after: bigint; viewer: ViewerKey; issuedAt: number };

/** Longer tokens are not ours: refused (410) without being decoded. */
export const TOKEN_MAX_LENGTH = 512;

const IV_BYTES = 12;
const TAG_BYTES = 16;

type Wire =
  | { k: 's'; s: string; v: string; t: number }
  | { k: 'f'; u: string; a: string; v: string; t: number }
  | { k: 'd'; f: string; u: string; a: string; v: string; t: number };

function toWire(position: SyncPosition): Wire {
  switch (position.kind) {
    case 'sync':
      return { k: 's', s: position.seq.toString(), v: position.viewer, t: position.issuedAt };
    case 'full':
      return {
        k: 'f',
        u: position.upto.toString(),
        a: position.after,
        v: position.viewer,
        t: position.issuedAt,
      };
    case 'delta':
      return {
        k: 'd',
        f: position.from.toString(),
        u: position.upto.toString(),
        a: position.after.toString(),
        v: position.viewer,
        t: position.issuedAt,
      };
  }
}

const DIGITS = /^\d{1,19}$/;

function fromWire(value: unknown): SyncPosition | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const wire = value as Record<string, unknown>;
  const text = (name: string): string | undefined =>
    typeof wire[name] === 'string' ? (wire[name] as string) : undefined;
  const number = (name: string): bigint | undefined => {
    const raw = text(name);
    return raw !== undefined && DIGITS.test(raw) ? BigInt(raw) : undefined;
  };
  const viewer = text('v');
  const issuedAt = wire.t;
  if (viewer === undefined || typeof issuedAt !== 'number' || !Number.isSafeInteger(issuedAt))
    return undefined;
  switch (wire.k) {
    case 's': {
      const seq = number('s');
      return seq === undefined ? undefined : { kind: 'sync', seq, viewer, issuedAt };
    }
    case 'f': {
      const upto = number('u');
      const after = text('a');
      return upto === undefined || after === undefined
        ? undefined
        : { kind: 'full', upto, after, viewer, issuedAt };
    }
    case 'd': {
      const from = number('f');
      const upto = number('u');
      const after = number('a');
      return from === undefined || upto === undefined || after === undefined
        ? undefined
        : { kind: 'delta', from, upto, after, viewer, issuedAt };
    }
    default:
      return undefined;
  }
}

export function sealToken(position: SyncPosition, key: Buffer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(toWire(position)), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url');
}

/** The position a token holds, or undefined when it is not one of ours (malformed, edited, too long). */
export function openToken(token: string, key: Buffer): SyncPosition | undefined {
  if (token.length === 0 || token.length > TOKEN_MAX_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token))
    return undefined;
  const bytes = Buffer.from(token, 'base64url');
  // Only the canonical text of the bytes: an edit of the last character's unused bits is refused too.
  if (bytes.length <= IV_BYTES + TAG_BYTES || bytes.toString('base64url') !== token) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    const plain = Buffer.concat([
      decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]);
    return fromWire(JSON.parse(plain.toString('utf8')));
  } catch {
    return undefined;
  }
}

export type TokenCheck = { ok: true } | { ok: false; reason: string };

/**
 * Whether a position may still be used by this caller: made for the same view, younger than the
 * retention, and not older than the pruned part of the log (410 otherwise: start a full sync).
 */
export function checkPosition(
  position: SyncPosition,
  context: { viewer: ViewerKey; nowSeconds: number; retentionSeconds: number; pruned: bigint },
): TokenCheck {
  if (position.viewer !== context.viewer) {
    return { ok: false, reason: 'the token was made for another caller (or other credentials)' };
  }
  if (context.nowSeconds - position.issuedAt > context.retentionSeconds) {
    return { ok: false, reason: 'the token is older than the sync retention' };
  }
  const oldest =
    position.kind === 'sync' ? position.seq : position.kind === 'delta' ? position.from : position.upto;
  if (oldest < context.pruned) return { ok: false, reason: 'the changes since the token were pruned' };
  return { ok: true };
}
