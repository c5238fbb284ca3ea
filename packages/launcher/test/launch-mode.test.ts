import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverServices } from '../src/discover.js';
import { nodeArguments } from '../src/launch-mode.js';

function servicesWith(platform: object): string {
  const dir = mkdtempSync(join(tmpdir(), 'launch-mode-'));
  mkdirSync(join(dir, 'svc', 'src'), { recursive: true });
  writeFileSync(join(dir, 'svc', 'package.json'), JSON.stringify({ name: 'svc', platform }));
  writeFileSync(join(dir, 'svc', 'src', 'server.ts'), '');
  return dir;
}

describe('node flags of a service', () => {
  const health = 'http://127.0.0.1:1/health';

  it('come from platform.nodeFlags and go before the entry when compiled or run through tsx', () => {
    const [spec] = discoverServices(servicesWith({ health, nodeFlags: ['--max-semi-space-size=8'] }));
    expect(spec?.nodeFlags).toEqual(['--max-semi-space-size=8']);
    const compiled = nodeArguments(spec!, 'compiled');
    expect(compiled.indexOf('--max-semi-space-size=8')).toBeGreaterThanOrEqual(0);
    expect(compiled.at(-1)).toMatch(/dist\/server\.js$/);
    const tsx = nodeArguments(spec!, 'tsx');
    expect(tsx[0]).toBe('--max-semi-space-size=8');
    expect(tsx.at(-1)).toMatch(/src\/server\.ts$/);
    expect(nodeArguments(spec!, 'watch')).not.toContain('--max-semi-space-size=8');
  });

  it('are none when the field is absent', () => {
    const [spec] = discoverServices(servicesWith({ health }));
    expect(spec?.nodeFlags).toEqual([]);
  });

  it('must be a list of flags: anything else is refused naming the field', () => {
    for (const nodeFlags of ['--max-semi-space-size=8', ['max-semi-space-size=8'], [8]]) {
      expect(() => discoverServices(servicesWith({ health, nodeFlags }))).toThrow(/platform\.nodeFlags/);
    }
  });
});
