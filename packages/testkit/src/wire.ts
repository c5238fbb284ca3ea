import { connect as netConnect, type Socket } from 'node:net';
import { type ConnectionOptions, connect as tlsConnect } from 'node:tls';

/**
 * Sends one raw text command over TCP (or TLS) and resolves with what the server answered first.
 * Used only for readiness probes (Redis PING, memcached version), so no client library is needed.
 */
export function rawCommand(
  host: string,
  port: number,
  command: string,
  options: { tls?: ConnectionOptions; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: Socket = options.tls
      ? tlsConnect({ host, port, ...options.tls })
      : netConnect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer from ${host}:${port} to ${command.trim()}`));
    }, options.timeoutMs ?? 1_000);
    let buffer = '';
    socket.once(options.tls ? 'secureConnect' : 'connect', () => socket.write(command));
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      if (buffer.includes('\r\n')) {
        clearTimeout(timer);
        socket.end();
        resolve(buffer);
      }
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** Encodes a command as a RESP array, as redis-cli does, so arguments may contain spaces. */
export function respCommand(...parts: string[]): string {
  return `*${parts.length}\r\n${parts.map((p) => `$${Buffer.byteLength(p)}\r\n${p}\r\n`).join('')}`;
}
