import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CacheStore, FileCacheStore, MemoryCacheStore, type StoredEntry } from '../src/cache/store.js';
import { tempDir } from './support/processes.js';

const dirs: Array<{ remove(): Promise<void> }> = [];
afterAll(async () => {
  for (const dir of dirs) await dir.remove();
});

const key = (n: number) => n.toString(16).padStart(64, '0');
const entry = (n: number, body = `{"data":{"n":${n}}}`): StoredEntry => ({
  key: key(n),
  storedAt: 1000 + n,
  tags: ['Post', `id:${n}`],
  invalidated: false,
  body,
});

// One contract, run against every CacheStore implementation.
const implementations: Array<[string, () => Promise<CacheStore>]> = [
  ['memory', async () => new MemoryCacheStore()],
  [
    'file',
    async () => {
      const dir = await tempDir('cache-store');
      dirs.push(dir);
      return FileCacheStore.open(dir.path);
    },
  ],
];

describe.each(implementations)('CacheStore contract: %s', (_name, open) => {
  it('reads back what it wrote, with the body as JSON text', async () => {
    const store = await open();
    await store.write(entry(1));
    const read = await store.read(key(1));
    expect(read).toMatchObject({ key: key(1), storedAt: 1001, tags: ['Post', 'id:1'], invalidated: false });
    expect(JSON.parse(read?.body ?? 'null')).toEqual({ data: { n: 1 } });
  });

  it('misses an unknown key, overwrites, removes and lists', async () => {
    const store = await open();
    expect(await store.read(key(9))).toBeUndefined();
    await store.write(entry(2));
    await store.write({ ...entry(2), invalidated: true });
    await store.write(entry(3));
    expect((await store.read(key(2)))?.invalidated).toBe(true);
    await store.remove(key(3));
    await store.remove(key(3));
    expect((await store.list()).map((item) => item.key)).toEqual([key(2)]);
  });
});

describe('FileCacheStore files', () => {
  it('treats corrupt and foreign files as misses, removes them, and cleans temporary files', async () => {
    const dir = await tempDir('cache-files');
    dirs.push(dir);
    const store = await FileCacheStore.open(dir.path);
    await store.write(entry(1));
    await writeFile(path.join(dir.path, `${key(2)}.json`), '{"key":');
    await writeFile(
      path.join(dir.path, `${key(3)}.json`),
      JSON.stringify({ key: key(4), storedAt: 1, tags: [], body: {} }),
    );
    await writeFile(path.join(dir.path, `${key(5)}.abc.tmp`), 'partial');
    expect(await store.read(key(2))).toBeUndefined();
    const listed = await store.list();
    expect(listed.map((item) => item.key)).toEqual([key(1)]);
    expect((await readdir(dir.path)).sort()).toEqual([`${key(1)}.json`]);
  });
});
