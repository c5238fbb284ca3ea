import { createHash } from 'node:crypto';

/**
 * The fault-injecting sandbox (README "Callback faults"): a test merchant may ask the gateway to
 * mistreat its callbacks the way networks and several gateway instances do, so it can prove its
 * receiver copes. Pure: the settings, their text form, and each callback's fate, decided from the seed
 * and the callback's identity (never from timing), so the same seed and the same merchant references
 * give the same faults in every run.
 */
export interface CallbackFaults {
  /** Probability a callback is sent twice (alongside itself, or again after its acknowledgement). */
  readonly duplicate: number;
  /** Probability a callback is held back for a time in `delayMs` before it is sent. */
  readonly delay: number;
  readonly delayMs: readonly [number, number];
  /**
   * Probability a callback waits until a callback written after it, of another object, has been
   * acknowledged (at most the top of `delayMs`): objects are seen out of their order.
   */
  readonly reorder: number;
  /** Probability an attempt is dropped (not sent, not counted) and redelivered after `redeliverMs`. */
  readonly drop: number;
  readonly redeliverMs: readonly [number, number];
  /**
   * Probability a callback is signed with the secret before the merchant's last rotation, while
   * that rotation's grace period runs, as an instance that has not yet seen the rotation would.
   */
  readonly rotated: number;
  /** @default `TEST_SEED`, else a random one (logged at start) */
  readonly seed: number | undefined;
}

/** What `on` means: every fault, often enough to show in a few dozen callbacks, delays short. */
export const DEFAULT_FAULTS: CallbackFaults = Object.freeze({
  duplicate: 0.25,
  delay: 0.25,
  delayMs: [20, 300] as const,
  reorder: 0.25,
  drop: 0.25,
  redeliverMs: [50, 500] as const,
  rotated: 0.3,
  seed: undefined,
});

const NONE: CallbackFaults = Object.freeze({
  ...DEFAULT_FAULTS,
  duplicate: 0,
  delay: 0,
  reorder: 0,
  drop: 0,
  rotated: 0,
});

const PROBABILITIES = ['duplicate', 'delay', 'reorder', 'drop', 'rotated'] as const;
const RANGES = { delay_ms: 'delayMs', redeliver_ms: 'redeliverMs' } as const;
/** Held or redelivered callbacks stay under their claim's lease: no range may reach past this. */
export const LONGEST_FAULT_MS = 10_000;

export type ParsedFaults = { ok: true; faults: CallbackFaults } | { ok: false; problem: string };

/**
 * Reads `on`, `off`, or a list such as `on,drop=0.5,seed=7` or `duplicate=0.3,delay=0.2,delay_ms=10-200`:
 * `on` starts from every default (`DEFAULT_FAULTS`), otherwise a fault not named stays off.
 */
export function parseCallbackFaults(text: string): ParsedFaults {
  const items = text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length === 1 && items[0] === 'off') return { ok: true, faults: NONE };
  let faults: { -readonly [K in keyof CallbackFaults]: CallbackFaults[K] } = { ...NONE };
  for (const [index, item] of items.entries()) {
    if (item === 'on' && index === 0) {
      faults = { ...DEFAULT_FAULTS };
      continue;
    }
    const match = /^([a-z_]+)=(.+)$/.exec(item);
    if (!match) return { ok: false, problem: `expected on, off or name=value, got "${item}"` };
    const [, name = '', value = ''] = match;
    if ((PROBABILITIES as readonly string[]).includes(name)) {
      if (!/^(0(\.\d+)?|1(\.0+)?)$/.test(value))
        return { ok: false, problem: `${name} is a probability from 0 to 1, got "${value}"` };
      faults[name as (typeof PROBABILITIES)[number]] = Number(value);
    } else if (name in RANGES) {
      const range = /^(\d{1,6})-(\d{1,6})$/.exec(value);
      const [low, high] = [Number(range?.[1]), Number(range?.[2])];
      if (!range || low > high || high > LONGEST_FAULT_MS)
        return {
          ok: false,
          problem: `${name} is <min>-<max> milliseconds up to ${LONGEST_FAULT_MS}, got "${value}"`,
        };
      faults[RANGES[name as keyof typeof RANGES]] = [low, high];
    } else if (name === 'seed') {
      if (!/^\d{1,15}$/.test(value)) return { ok: false, problem: `seed is a whole number, got "${value}"` };
      faults.seed = Number(value);
    } else {
      return {
        ok: false,
        problem: `unknown fault "${name}" (duplicate, delay, delay_ms, reorder, drop, redeliver_ms, rotated, seed)`,
      };
    }
  }
  return { ok: true, faults: Object.freeze(faults) };
}

/** True when the settings would do anything. */
export function faultsOn(faults: CallbackFaults): boolean {
  return PROBABILITIES.some((name) => faults[name] > 0);
}

/** The fate of one attempt of one callback. */
export interface FaultPlan {
  /** Not sent this time: redelivered after this many ms. */
  readonly dropForMs: number | undefined;
  /** Held back this long before sending (0: not held). */
  readonly delayMs: number;
  /** Held until a later callback of another object has been acknowledged (at most `holdMaxMs`). */
  readonly reorder: boolean;
  readonly holdMaxMs: number;
  readonly duplicate: 'none' | 'alongside' | 'after';
  /** Signed with the secret before the rotation (when one is in its grace period). */
  readonly signWithPrevious: boolean;
}

/** Uniform numbers in [0, 1) from sha256(seed, key): the same key always has the same fate. */
function uniforms(seed: number, key: string): number[] {
  const digest = createHash('sha256').update(`${seed}\u0000${key}`).digest();
  const values: number[] = [];
  for (let offset = 0; offset + 4 <= digest.length; offset += 4)
    values.push(digest.readUInt32BE(offset) / 2 ** 32);
  return values;
}

function within([low, high]: readonly [number, number], u: number): number {
  return low + Math.floor(u * (high - low + 1));
}

/**
 * Decides one attempt's faults. `key` names the callback and the attempt (the merchant, object type,
 * the merchant's reference, the event's sequence and the attempt number): nothing random at run time.
 */
export function planFaults(faults: CallbackFaults, seed: number, key: string): FaultPlan {
  const [drop = 1, dropFor = 0, delay = 1, delayFor = 0, reorder = 1, duplicate = 1, how = 0, rotated = 1] =
    uniforms(seed, key);
  return {
    dropForMs: drop < faults.drop ? within(faults.redeliverMs, dropFor) : undefined,
    delayMs: delay < faults.delay ? within(faults.delayMs, delayFor) : 0,
    reorder: reorder < faults.reorder,
    holdMaxMs: faults.delayMs[1],
    duplicate: duplicate < faults.duplicate ? (how < 0.5 ? 'alongside' : 'after') : 'none',
    signWithPrevious: rotated < faults.rotated,
  };
}
