import { BlockList, isIP } from 'node:net';

// 127.0.0.0/8 and ::1; BlockList also matches the IPv4-mapped forms (::ffff:127.0.0.1) and any
// spelling of ::1 (0:0:0:0:0:0:0:1), which a string comparison would miss.
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * Whether a listen address (`HOST`) only accepts connections from this machine: `localhost`, an
 * address in 127.0.0.0/8, or ::1. Anything else, wildcards (0.0.0.0, ::) and host names included,
 * may be reachable from the network.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (name === 'localhost') return true;
  const family = isIP(name);
  if (family === 0) return false;
  return LOOPBACK.check(name, family === 4 ? 'ipv4' : 'ipv6');
}
