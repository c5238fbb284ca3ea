import { describe, expect, it } from 'vitest';
import { MissingBinaryError, requireBinary } from '../src/binaries.js';
import { spawnManaged, waitUntilReady } from '../src/process.js';

describe('requireBinary', () => {
  it('names the Debian package when a binary is missing', () => {
    expect(() => requireBinary('no-such-server-binary', 'no-such-package')).toThrow(MissingBinaryError);
    expect(() => requireBinary('no-such-server-binary', 'no-such-package')).toThrow(
      /apt-get install -y no-such-package/,
    );
  });

  it('finds a binary that exists', () => {
    expect(requireBinary('sh', 'dash')).toMatch(/\/sh$/);
  });
});

describe('spawnManaged', () => {
  it('reports the output of a process that exits before it is ready', async () => {
    const proc = spawnManaged({ name: 'failing', command: '/bin/sh', args: ['-c', 'echo boom; exit 3'] });
    await expect(waitUntilReady(proc, async () => false, 5_000)).rejects.toThrow(/failing exited.*\n.*boom/);
  });
});
