/**
 * Delay before the next callback attempt after `attempts` failed ones: 1 s doubling, capped at
 * 5 min (gateway-contract.md "Callbacks").
 */
export function callbackBackoffMs(attempts: number, baseMs = 1_000, capMs = 300_000): number {
  if (attempts <= 0) return 0;
  const exponent = Math.min(attempts - 1, 30);
  return Math.min(baseMs * 2 ** exponent, capMs);
}
