import { readFileSync } from 'node:fs';
import { isIPv4, type Socket } from 'node:net';
import { endianness } from 'node:os';

/**
 * An IPv4 address as `/proc/net/tcp` prints it (the 32-bit value in the machine's byte order), or
 * as `/proc/net/tcp6` prints it mapped (`::ffff:a.b.c.d`, four such words).
 */
function procHex(address: string, table: 'tcp' | 'tcp6'): string {
  const bytes = address.split('.').map(Number);
  const word = (four: number[]) => {
    const ordered = endianness() === 'LE' ? [...four].reverse() : four;
    return ordered
      .map((byte) => byte.toString(16).padStart(2, '0'))
      .join('')
      .toUpperCase();
  };
  return table === 'tcp' ? word(bytes) : `${'0'.repeat(16)}${word([0, 0, 0xff, 0xff])}${word(bytes)}`;
}

/**
 * The user (uid) owning the other end of a TCP connection made on this machine over IPv4, from
 * Linux's `/proc/net/tcp` and `/proc/net/tcp6` (each socket's local and remote address and its
 * owner's uid): the client's socket is the established row whose local address is the connection's
 * remote one and whose remote address is its local one. `undefined` when no such row is found;
 * `'unknown'` without those tables (not Linux), where the caller relies on its token alone.
 */
export function loopbackPeerUid(socket: Socket): number | undefined | 'unknown' {
  const { remoteAddress, remotePort, localAddress, localPort } = socket;
  if (!remoteAddress || !localAddress || remotePort === undefined || localPort === undefined)
    return undefined;
  const plain = (address: string) => address.replace(/^::ffff:/, '');
  if (!isIPv4(plain(remoteAddress)) || !isIPv4(plain(localAddress))) return undefined;
  const port = (value: number) => value.toString(16).padStart(4, '0').toUpperCase();
  let readable = false;
  for (const table of ['tcp', 'tcp6'] as const) {
    let text: string;
    try {
      text = readFileSync(`/proc/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    readable = true;
    const client = `${procHex(plain(remoteAddress), table)}:${port(remotePort)}`;
    const server = `${procHex(plain(localAddress), table)}:${port(localPort)}`;
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid ...
      const [, local, remote, state, , , , uid] = line.trim().split(/\s+/);
      // 01: ESTABLISHED
      if (local === client && remote === server && state === '01' && uid !== undefined) return Number(uid);
    }
  }
  return readable ? undefined : 'unknown';
}
