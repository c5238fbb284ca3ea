/**
 * Parses a duration in the notation of the reference service's settings (Go's `time.ParseDuration`):
 * a sequence of decimal numbers with unit suffixes `ns`, `us` (or `µs`), `ms`, `s`, `m`, `h`, such as
 * `10s`, `1m30s` or `1.5h`. A bare `0` is accepted. Returns milliseconds (fractions kept), or null when
 * the text is not a duration.
 */
const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

export function parseDurationMs(text: string): number | null {
  const trimmed = text.trim();
  if (trimmed === '0') return 0;
  const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let index = 0;
  while (index < trimmed.length) {
    part.lastIndex = index;
    const match = part.exec(trimmed);
    if (!match) return null;
    total += Number(match[1]) * (UNIT_MS[match[2] as string] ?? Number.NaN);
    index = part.lastIndex;
  }
  return index === 0 || !Number.isFinite(total) ? null : total;
}
