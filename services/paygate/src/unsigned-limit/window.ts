import { isIPv4, isIPv6 } from 'node:net';

/**
 * The limit on invoices created without the merchant's signature (README "Unsigned invoices"), pure:
 * the clock, the address and the count come in, the window and the verdict go out. Fixed windows
 * aligned to the Unix epoch, every attempt counted (refused ones too), over the limit when the count
 * after this attempt exceeds it.
 */
export interface UnsignedLimitSettings {
  /** Attempts per address and window; 0: no unsigned create at all. */
  readonly perAddress: number;
  readonly windowSeconds: number;
}

/** Unix seconds at which the window holding `nowMs` began. */
export function windowStart(settings: UnsignedLimitSettings, nowMs: number): number {
  const now = Math.floor(nowMs / 1000);
  return now - (now % settings.windowSeconds);
}

export type UnsignedVerdict =
  | { readonly allowed: true }
  /** Whole seconds until the window ends (1..window length): the answer's `retry-after`. */
  | { readonly allowed: false; readonly retryAfterSeconds: number };

/** The verdict on an attempt that made the window's count `count` (this attempt included). */
export function verdict(settings: UnsignedLimitSettings, count: number, nowMs: number): UnsignedVerdict {
  if (count <= settings.perAddress) return { allowed: true };
  const ends = windowStart(settings, nowMs) + settings.windowSeconds;
  return { allowed: false, retryAfterSeconds: Math.max(1, ends - Math.floor(nowMs / 1000)) };
}

/**
 * Whose attempts count together: an IPv4 address (also written IPv4-mapped, `::ffff:1.2.3.4`), or
 * the /64 of an IPv6 address, since one subscriber is given a whole /64 and could otherwise take a
 * fresh address per attempt.
 */
export function limitSubject(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped && isIPv4(mapped)) return mapped;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  // An embedded IPv4 tail (`::1.2.3.4`) counts as two groups; only the first four groups matter here.
  const rightGroups = right.flatMap((group) => (group.includes('.') ? ['0', '0'] : [group]));
  const groups = address.includes('::')
    ? [...left, ...Array(8 - left.length - rightGroups.length).fill('0'), ...rightGroups]
    : left;
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}
