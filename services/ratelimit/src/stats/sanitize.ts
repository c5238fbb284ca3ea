/**
 * The reference's `SanitizeStatName` (src/utils/utilities.go): `:` and `|` would break the statsd
 * line format, so they become `_`; so do the dots of an IPv4 address (`10.0.0.1` -> `10_0_0_1`),
 * which would otherwise split one stat name into four path parts.
 */
const IPV4 = /\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}/g;

export function sanitizeStatName(name: string): string {
  return name.replace(/[:|]/g, '_').replace(IPV4, (ip) => ip.replaceAll('.', '_'));
}
