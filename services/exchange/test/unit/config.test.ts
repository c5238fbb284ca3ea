import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('configuration', () => {
  it('defaults to the embedded database under ./data/exchange with a generated master key', () => {
    const config = loadConfig({}, '/srv/app');
    expect(config.port).toBe(3100);
    expect(config.storage).toEqual({
      kind: 'pglite',
      dataDir: path.join('/srv/app/data/exchange', 'pgdata'),
    });
    expect(config.masterKey).toEqual({
      kind: 'file',
      path: '/srv/app/data/exchange/master.key',
      createIfMissing: true,
    });
    expect(config.seedDemo).toBe(true);
    expect(config.orderPipelineDepth).toBe(1);
    expect(loadConfig({ ORDER_PIPELINE_DEPTH: '2' }).orderPipelineDepth).toBe(2);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('uses PostgreSQL with DATABASE_URL and then requires a master key', () => {
    const url = 'postgres://u@db/exchange';
    expect(() => loadConfig({ DATABASE_URL: url })).toThrow(/MASTER_KEY/);
    const config = loadConfig({ DATABASE_URL: url, MASTER_KEY: 'ab'.repeat(32) });
    expect(config.storage).toMatchObject({ kind: 'postgres', url });
    expect(config.seedDemo).toBe(false);
  });

  it('fails fast naming the wrong setting', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ PORT: '70000' })).toThrow(/PORT/);
    expect(() => loadConfig({ MASTER_KEY: 'short' })).toThrow(/MASTER_KEY/);
    expect(() => loadConfig({ SEED_DEMO: 'maybe' })).toThrow(/SEED_DEMO/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ ORDER_PIPELINE_DEPTH: '0' })).toThrow(/ORDER_PIPELINE_DEPTH/);
    expect(() => loadConfig({ ORDER_PIPELINE_DEPTH: 'deep' })).toThrow(/ORDER_PIPELINE_DEPTH/);
  });
});
