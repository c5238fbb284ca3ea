import { describe, expect, it } from 'vitest';
import { startMemcachedNodes } from '../src/memcached.js';
import { rawCommand } from '../src/wire.js';

describe('startMemcached', () => {
  it('starts independent nodes that store values', async () => {
    const nodes = await startMemcachedNodes(2);
    try {
      const [a, b] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
      expect(await rawCommand(a.host, a.port, 'set k 0 60 1\r\nx\r\n')).toBe('STORED\r\n');
      expect(await rawCommand(b.host, b.port, 'get k\r\n')).toBe('END\r\n');
      expect(await rawCommand(a.host, a.port, 'get k\r\n')).toContain('VALUE k 0 1');
    } finally {
      await Promise.all(nodes.map((n) => n.stop()));
    }
  });
});
