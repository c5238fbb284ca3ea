/** Candle resolutions and their lengths in seconds; candles start at multiples of their length (UTC). */
export const RESOLUTIONS = {
  '1m': 60,
  '5m': 300,
  '15m': 900,
  '1h': 3_600,
  '4h': 14_400,
  '1d': 86_400,
} as const;

export type Resolution = keyof typeof RESOLUTIONS;

export function isResolution(value: unknown): value is Resolution {
  return typeof value === 'string' && Object.hasOwn(RESOLUTIONS, value);
}

/** The start (Unix seconds) of the candle of `resolution` that holds the time `ms`. */
export function candleStart(resolution: Resolution, ms: number): number {
  const seconds = RESOLUTIONS[resolution];
  return Math.floor(ms / 1000 / seconds) * seconds;
}
