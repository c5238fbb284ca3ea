import { parseValues, WireConnection } from '../../src/backends/memcached-wire.js';

/** The value of `key` on one memcached node (undefined when missing), read with a plain `get`. */
export async function rawGet(port: number, key: string): Promise<string | undefined> {
  const conn = new WireConnection({ host: '127.0.0.1', port, tls: undefined }, 2000);
  try {
    return (await conn.send(`get ${key}\r\n`, parseValues)).get(key)?.toString('ascii');
  } finally {
    conn.close();
  }
}
