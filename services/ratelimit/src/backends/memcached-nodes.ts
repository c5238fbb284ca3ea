import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { crc32 } from 'node:zlib';

/**
 * The memcached node list and the node choice for a key. Keys map to nodes by crc32(key) % nodes
 * (gomemcache's ServerList), so every instance must hold the same list in the same order:
 * MEMSTORE_HOST_PORT is used as written; SRV targets are sorted by `target:port`.
 */
export interface NodeAddress {
  /** Identity of the node (`host:port` as configured or as the SRV target names it). */
  readonly id: string;
  /** Where to connect (the target's A record when it resolved, else the name). */
  readonly host: string;
  readonly port: number;
}

export function nodeIndexForKey(key: string, nodeCount: number): number {
  return crc32(key) % nodeCount;
}

export function parseHostPorts(hostPorts: string): NodeAddress[] {
  return hostPorts
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => {
      const colon = s.lastIndexOf(':');
      if (colon < 0) return { id: s, host: s, port: 11211 };
      return { id: s, host: s.slice(0, colon).replace(/^\[|\]$/g, ''), port: Number(s.slice(colon + 1)) };
    });
}

export interface SrvTarget {
  name: string;
  port: number;
}

/** The SRV targets in the order every instance uses (priority and weight are ignored, as the reference). */
export function sortSrvTargets(targets: readonly SrvTarget[]): SrvTarget[] {
  return [...targets].sort((a, b) => {
    const x = `${a.name}:${a.port}`;
    const y = `${b.name}:${b.port}`;
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/**
 * Looks `srv` up (with `dnsServers` when given, e.g. a test's resolver) and returns the sorted node
 * list; each target is resolved to an IPv4 address with the same resolver, falling back to its name.
 * Rejects when the lookup fails or returns no target.
 */
export async function lookupSrvNodes(srv: string, dnsServers: readonly string[]): Promise<NodeAddress[]> {
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  if (dnsServers.length > 0) resolver.setServers([...dnsServers]);
  const records = await resolver.resolveSrv(srv);
  if (records.length === 0) throw new Error(`SRV ${srv}: no targets`);
  const sorted = sortSrvTargets(records);
  return Promise.all(
    sorted.map(async ({ name, port }) => {
      let host = name;
      if (isIP(name) === 0) {
        try {
          host = (await resolver.resolve4(name))[0] ?? name;
        } catch {
          // Left to the system resolver when connecting.
        }
      }
      return { id: `${name}:${port}`, host, port };
    }),
  );
}
