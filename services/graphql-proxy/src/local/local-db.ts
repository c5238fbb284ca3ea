import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { QueuedMutation } from '../queue/store.js';
import {
  applyOne,
  applyPending,
  COLLECTIONS,
  copyCollections,
  emptyCollections,
  type LocalCollections,
} from './optimistic.js';
import type { SyncResult } from './sync.js';

/**
 * The local database file (`LOCAL_DB_PATH`): the collections last synchronised from the upstream
 * (`synced`), and the view with queued mutations applied optimistically (`data`). Written atomically;
 * a failed sync leaves it untouched; a corrupt file at start is set aside and replaced by an empty one.
 *
 * Queue changes cost O(1) each: an appended mutation is applied to the view in place, any other
 * change only marks the view for recomputation when it is next read, and the file is rewritten at
 * most once per `writeDelayMs` (a burst of 10,000 enqueues does not write the whole file 10,000 times).
 */

interface LocalDbFile {
  version: 1;
  lastUpdated: string | null;
  synced: LocalCollections;
  data: LocalCollections;
}

export interface LocalCounts {
  posts: number;
  pages: number;
  categories: number;
  tags: number;
  authors: number;
  lastUpdated: string | null;
}

export class LocalDb {
  private syncing: Promise<SyncResult> | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** Set when the view must be recomputed from `synced` and the queue before it is read. */
  private stale: (() => readonly QueuedMutation[]) | undefined;
  private writeTimer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly file: string,
    private state: LocalDbFile,
    private readonly logger: Logger,
    private readonly writeDelayMs: number,
  ) {}

  static async open(file: string, logger: Logger, writeDelayMs = 200): Promise<LocalDb> {
    await mkdir(path.dirname(file), { recursive: true });
    let state: LocalDbFile = {
      version: 1,
      lastUpdated: null,
      synced: emptyCollections(),
      data: emptyCollections(),
    };
    try {
      const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<LocalDbFile>;
      if (parsed.synced && COLLECTIONS.every((name) => Array.isArray(parsed.synced?.[name]))) {
        state = {
          version: 1,
          lastUpdated: parsed.lastUpdated ?? null,
          synced: parsed.synced,
          data: copyCollections(parsed.synced),
        };
      } else {
        throw new Error('unexpected shape');
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        logger.warn({ file }, 'local database file is corrupt; set aside as .corrupt and starting empty');
        await rename(file, `${file}.corrupt`).catch(() => undefined);
      }
    }
    return new LocalDb(file, state, logger, writeDelayMs);
  }

  get data(): LocalCollections {
    if (this.stale) {
      const queued = this.stale;
      this.stale = undefined;
      this.state = { ...this.state, data: applyPending(this.state.synced, queued()) };
    }
    return this.state.data;
  }

  /** The collections as last synchronised from the upstream (without the queued mutations). */
  get synced(): LocalCollections {
    return this.state.synced;
  }

  get lastUpdated(): string | null {
    return this.state.lastUpdated;
  }

  counts(): LocalCounts {
    const data = this.data;
    return {
      posts: data.posts.length,
      pages: data.pages.length,
      categories: data.categories.length,
      tags: data.tags.length,
      authors: data.authors.length,
      lastUpdated: this.state.lastUpdated,
    };
  }

  /** Recomputes the optimistic view from the queue and writes the file. */
  async applyQueue(queued: readonly QueuedMutation[]): Promise<void> {
    this.stale = undefined;
    this.state = { ...this.state, data: applyPending(this.state.synced, queued) };
    await this.persist().catch(() => undefined); // logged by persist; the next change writes again
  }

  /** A mutation was appended to the queue: applied to the view in place (O(1) in the queue length). */
  appendPending(item: QueuedMutation): void {
    if (!this.stale) applyOne(this.state.data, item);
    this.persistSoon();
  }

  /** The queue changed otherwise (replayed, rejected, discarded): recomputed when next read. */
  queueChanged(queued: () => readonly QueuedMutation[]): void {
    this.stale = queued;
    this.persistSoon();
  }

  private persistSoon(): void {
    if (this.writeTimer) return;
    this.writeTimer = setTimeout(() => {
      this.writeTimer = undefined;
      this.persist().catch(() => undefined); // logged by persist
    }, this.writeDelayMs);
    this.writeTimer.unref();
  }

  /**
   * Runs one sync at a time (concurrent callers share it). On success the synced collections are
   * replaced and the queue re-applied on top; on failure nothing changes.
   */
  sync(
    fetch: () => Promise<SyncResult>,
    queued: () => readonly QueuedMutation[],
    now: () => number,
  ): Promise<SyncResult> {
    this.syncing ??= (async () => {
      try {
        const result = await fetch();
        if (!result.ok) {
          this.logger.warn({ error: result.error }, 'local sync failed; the local database was kept');
          return result;
        }
        this.stale = undefined;
        this.state = {
          version: 1,
          lastUpdated: new Date(now()).toISOString(),
          synced: result.collections,
          data: applyPending(result.collections, queued()),
        };
        try {
          await this.persist();
        } catch {
          return { ok: false, error: 'the local database file could not be written' };
        }
        return result;
      } finally {
        this.syncing = undefined;
      }
    })();
    return this.syncing;
  }

  private persist(): Promise<void> {
    const text = JSON.stringify({ ...this.state, data: this.data });
    const next = this.writing.then(async () => {
      const temp = `${this.file}.${randomBytes(6).toString('hex')}.tmp`;
      await writeFile(temp, text);
      await rename(temp, this.file);
    });
    this.writing = next.catch((error: unknown) =>
      this.logger.error({ err: error }, 'could not write the local db'),
    );
    return next;
  }

  async flush(): Promise<void> {
    if (this.writeTimer) {
      clearTimeout(this.writeTimer);
      this.writeTimer = undefined;
      await this.persist().catch(() => undefined);
    }
    await this.writing;
  }
}
