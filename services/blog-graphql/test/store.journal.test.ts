import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createContent } from '../src/domain/content.js';
import { seedState } from '../src/domain/seed.js';
import type { IdempotencyBounds } from '../src/idempotency/records.js';
import { BlogStore } from '../src/store/file-store.js';

// Issue 41: the store appends one journal line per change instead of rewriting blog.json, folds the
// journal into blog.json once it outgrew it, and opens whatever a crash left: a torn last line, or
// a new snapshot whose journal was not emptied yet. Real files in a throw-away folder.
const BOUNDS: IdempotencyBounds = {
  ttlMs: 60_000,
  maxKeys: 100,
  maxKeysPerCredential: 100,
  maxBytes: 1 << 20,
};
const NOW = Date.UTC(2026, 0, 1);
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'blog-store-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const openStore = (compactBytes = 1 << 20) =>
  BlogStore.open(dir, seedState, { bounds: BOUNDS, now: () => NOW, compactBytes });

async function createPosts(store: BlogStore, titles: readonly string[]): Promise<void> {
  await Promise.all(
    titles.map((title) => store.mutate((draft) => createContent(draft, 'posts', { title }, NOW))),
  );
}

const titles = (store: BlogStore) => store.current.posts.map((post) => post.title);

describe('the journal', () => {
  it('appends a line per change and leaves blog.json alone until the journal outgrows it', async () => {
    const store = await openStore();
    const snapshot = await stat(path.join(dir, 'blog.json'));
    await createPosts(store, ['one', 'two', 'three']);
    await store.storeAnswer('k', { requestHash: 'r', body: '{}', storedAt: NOW });
    await store.close();
    const after = await stat(path.join(dir, 'blog.json'));
    expect([after.ino, after.mtimeMs, after.size]).toEqual([snapshot.ino, snapshot.mtimeMs, snapshot.size]);
    const lines = (await readFile(path.join(dir, 'blog.journal'), 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      seq: 1,
      changes: [{ op: 'put', kind: 'posts' }, { op: 'nextId' }],
    });
    const again = await openStore();
    expect(titles(again).slice(-3)).toEqual(['one', 'two', 'three']);
    expect(again.answers.get('k', NOW)?.body).toBe('{}');
    expect(again.recovery).toEqual({ replayed: 4, tornBytes: 0 });
    await again.close();
    // Opening folded the journal into the snapshot.
    expect(await readFile(path.join(dir, 'blog.journal'), 'utf8')).toBe('');
  });

  it('compacts into blog.json once the journal is larger than it, and keeps every change', async () => {
    const store = await openStore(4096);
    const names = Array.from({ length: 300 }, (_, n) => `post ${n}`);
    for (const name of names) await createPosts(store, [name]);
    await store.flush();
    const journal = (await stat(path.join(dir, 'blog.journal'))).size;
    const snapshot = (await stat(path.join(dir, 'blog.json'))).size;
    expect(journal).toBeLessThanOrEqual(Math.max(4096, snapshot) + 1024);
    expect(JSON.parse(await readFile(path.join(dir, 'blog.json'), 'utf8')).journalSeq).toBeGreaterThan(100);
    await store.close();
    const again = await openStore(4096);
    expect(titles(again).slice(-300)).toEqual(names);
    await again.close();
  });

  it('cuts a torn last line (a process killed while writing it) and keeps the lines before', async () => {
    const store = await openStore();
    await createPosts(store, ['kept']);
    await store.close();
    await appendFile(path.join(dir, 'blog.journal'), '{"seq":2,"changes":[{"op":"put","kind":"posts","rec');
    const again = await openStore();
    expect(again.recovery.tornBytes).toBeGreaterThan(0);
    expect(titles(again).at(-1)).toBe('kept');
    await createPosts(again, ['after the tear']);
    await again.close();
    const third = await openStore();
    expect(titles(third).slice(-2)).toEqual(['kept', 'after the tear']);
    await third.close();
  });

  it('skips the lines a snapshot already holds (killed between the rename and emptying the journal)', async () => {
    const store = await openStore();
    await createPosts(store, ['a', 'b']);
    await store.close();
    const journal = await readFile(path.join(dir, 'blog.journal'), 'utf8');
    // Opening compacted: blog.json holds 'a' and 'b' (journalSeq 2). Put the old lines back.
    const reopened = await openStore();
    await reopened.close();
    await writeFile(path.join(dir, 'blog.journal'), journal);
    const again = await openStore();
    expect(again.recovery.replayed).toBe(0);
    expect(titles(again).filter((title) => title === 'a' || title === 'b')).toEqual(['a', 'b']);
    expect(again.current.nextId).toBe(reopened.current.nextId);
    await again.close();
  });

  it('refuses a corrupt line before the last, and blog.json that is not JSON, naming the file', async () => {
    const store = await openStore();
    await createPosts(store, ['x', 'y']);
    await store.close();
    const file = path.join(dir, 'blog.journal');
    const lines = (await readFile(file, 'utf8')).split('\n');
    await writeFile(file, ['{"seq":1,"chan', ...lines].join('\n'));
    await expect(openStore()).rejects.toThrow(`the blog journal ${file} is corrupt at line 1`);
    await writeFile(file, '');
    await writeFile(path.join(dir, 'blog.json'), '{"posts":');
    await expect(openStore()).rejects.toThrow('is not valid JSON');
  });

  it('reads a data file of the format before the journal (idempotency inside) and converts it', async () => {
    const old = {
      ...seedState(),
      idempotency: { k: { requestHash: 'r', body: '{"old":1}', storedAt: NOW } },
    };
    await writeFile(path.join(dir, 'blog.json'), JSON.stringify(old));
    const store = await openStore();
    expect(store.answers.get('k', NOW)?.body).toBe('{"old":1}');
    expect(store.current.posts).toHaveLength(old.posts.length);
    await store.close();
    expect(JSON.parse(await readFile(path.join(dir, 'blog.json'), 'utf8'))).toMatchObject({
      format: 2,
      journalSeq: 0,
    });
  });
});
