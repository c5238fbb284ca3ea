import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BlogState } from '../domain/model.js';

/**
 * The blog's persistence: the whole state in one JSON file, rewritten atomically (temporary file +
 * rename) after every successful mutation. Writes are serialised so the file always holds the state of
 * the last committed mutation. A blog this size fits comfortably in memory.
 */
export class BlogStore {
  private state: BlogState;
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly file: string,
    initial: BlogState,
  ) {
    this.state = initial;
  }

  /** Loads the data file, or creates it from `seed()` when it does not exist. A corrupt file is an error. */
  static async open(dataDir: string, seed: () => BlogState): Promise<BlogStore> {
    await mkdir(dataDir, { recursive: true });
    const file = path.join(dataDir, 'blog.json');
    let text: string | undefined;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (text === undefined) {
      const store = new BlogStore(file, seed());
      await store.persist();
      return store;
    }
    let state: BlogState;
    try {
      state = JSON.parse(text) as BlogState;
    } catch {
      throw new Error(`the blog data file ${file} is not valid JSON; move it away to start from the seed`);
    }
    state.idempotency ??= {};
    return new BlogStore(file, state);
  }

  get current(): Readonly<BlogState> {
    return this.state;
  }

  /**
   * Runs `change` on a copy of the state; when it returns a successful outcome the copy becomes the
   * state and is written to disk before the promise resolves.
   */
  async mutate<T extends { ok: boolean }>(change: (draft: BlogState) => T): Promise<T> {
    const draft = structuredClone(this.state);
    const outcome = change(draft);
    if (outcome.ok) {
      this.state = draft;
      await this.persist();
    }
    return outcome;
  }

  private persist(): Promise<void> {
    const snapshot = JSON.stringify(this.state);
    const next = this.writing.then(async () => {
      const temp = `${this.file}.${process.pid}.tmp`;
      await writeFile(temp, snapshot);
      await rename(temp, this.file);
    });
    this.writing = next.catch(() => undefined);
    return next;
  }

  async flush(): Promise<void> {
    await this.writing;
  }
}
