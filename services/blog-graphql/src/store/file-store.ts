import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { BlogState } from '../domain/model.js';
import { type IdempotencyBounds, IdempotencyRecords, type IdempotentAnswer } from '../idempotency/records.js';
import { Journal } from './journal.js';
import { applyChanges, type ContentChange, diffState, isContentChange } from './state-diff.js';

/**
 * The blog's persistence: a snapshot (`blog.json`: the content and the idempotency records, and the
 * number of the last journal line it holds) and a journal (`blog.journal`: one JSON line per committed
 * change, the records it changed). Before issue 41 the whole state was rewritten per request (600
 * keyed queries: 6 kB -> 924 kB, median latency 24 -> 37 ms); now a request appends one line, and once
 * the journal is larger than the snapshot (and at least `compactBytes`) the snapshot is rewritten
 * (temporary file, fsync, rename) and the journal emptied, off the request that triggered it. Writes
 * are serialised, so the files always hold the changes in the order they were made, and a change is
 * answered only once its line is written. Opening replays the journal lines newer than the snapshot
 * (a crash between the snapshot's rename and the journal's truncation leaves older ones, skipped).
 * A process killed at any point loses at most the change it was writing, which nobody was told about
 * (test/store.crash.test.ts). Lines are not fsynced: a power cut may lose the last acknowledged changes
 * (never corrupt the files: a torn line is cut at start).
 */

/** What one journal line holds: content changes and idempotency records put or dropped. */
export type AnswerChange =
  | { readonly op: 'answer'; readonly key: string; readonly record: IdempotentAnswer }
  | { readonly op: 'drop'; readonly key: string };

type Change = ContentChange | AnswerChange;

interface JournalLine {
  readonly seq: number;
  readonly changes: readonly Change[];
}

/** What the snapshot file holds (format 1, before issue 41: the state alone, `idempotency` inside). */
interface Snapshot extends BlogState {
  readonly format?: 2;
  /** The last journal line the snapshot holds. */
  readonly journalSeq?: number;
  readonly idempotency?: Record<string, IdempotentAnswer>;
}

/** What opening found, for the start log. */
export interface StoreRecovery {
  /** Journal lines newer than the snapshot, replayed. */
  readonly replayed: number;
  /** Bytes of a torn last journal line (a process killed while writing it), cut away. */
  readonly tornBytes: number;
}

export interface StoreOptions {
  readonly bounds: IdempotencyBounds;
  readonly now: () => number;
  /** The journal is folded into the snapshot once larger than this and than the snapshot. @default 1 MiB */
  readonly compactBytes?: number;
  /** A compaction that failed (logged; the journal keeps every change and the next line retries). */
  readonly onCompactionError?: (error: unknown) => void;
}

/** A reservation of an idempotency record, made in the same line as the mutation's changes. */
export interface Reservation {
  readonly key: string;
  readonly record: IdempotentAnswer;
}

const isAnswerChange = (value: unknown): value is AnswerChange => {
  const change = value as Record<string, unknown> | null;
  return (
    typeof change === 'object' &&
    change !== null &&
    typeof change['key'] === 'string' &&
    (change['op'] === 'drop' || (change['op'] === 'answer' && typeof change['record'] === 'object'))
  );
};

function journalLine(value: unknown): JournalLine | undefined {
  const line = value as Partial<JournalLine> | null;
  if (
    typeof line !== 'object' ||
    line === null ||
    typeof line.seq !== 'number' ||
    !Array.isArray(line.changes)
  )
    return undefined;
  return line.changes.every((change) => isContentChange(change) || isAnswerChange(change))
    ? (line as JournalLine)
    : undefined;
}

/**
 * A change refused because an earlier one could not be written (disk full): memory held changes the
 * files do not, so it is read back from them before any change is taken again.
 */
export class StoreWriteError extends Error {
  override readonly name = 'StoreWriteError';
}

/** What the files hold, read as `open` reads them. */
interface Loaded {
  readonly state: BlogState;
  readonly answers: IdempotencyRecords;
  readonly journal: Journal;
  readonly seq: number;
  readonly snapshotText: string | undefined;
  readonly replayed: number;
  readonly tornBytes: number;
}

export class BlogStore {
  private writing: Promise<void> = Promise.resolve();
  private seq: number;
  private snapshotBytes: number;
  /**
   * Set when a journal line could not be written: from then on every change is refused until the
   * memory, which held that change (and any computed on top of it), is read back from the files.
   */
  private failedWrite: { readonly seq: number; recovering: boolean } | undefined;

  private constructor(
    private readonly file: string,
    private state: BlogState,
    private records: IdempotencyRecords,
    private journal: Journal,
    private readonly options: StoreOptions & { compactBytes: number },
    seq: number,
    snapshotBytes: number,
    readonly recovery: StoreRecovery,
  ) {
    this.seq = seq;
    this.snapshotBytes = snapshotBytes;
  }

  /** The stored answers of idempotent mutations (read them with `answers.get`). */
  get answers(): IdempotencyRecords {
    return this.records;
  }

  /**
   * Loads the snapshot (or creates it from `seed()` when there is none) and replays the journal. A
   * snapshot or journal line that does not parse is an error naming the file.
   */
  static async open(dataDir: string, seed: () => BlogState, options: StoreOptions): Promise<BlogStore> {
    await mkdir(dataDir, { recursive: true });
    const file = path.join(dataDir, 'blog.json');
    // Snapshots a killed process was writing (never renamed into place).
    for (const name of await readdir(dataDir)) {
      if (/^blog\.json\.\d+\.tmp$/.test(name)) await rm(path.join(dataDir, name), { force: true });
    }
    const loaded = await BlogStore.read(file, seed, options);
    const { snapshotText: text, replayed, tornBytes, answers } = loaded;
    const store = new BlogStore(
      file,
      loaded.state,
      answers,
      loaded.journal,
      { ...options, compactBytes: options.compactBytes ?? 1024 * 1024 },
      loaded.seq,
      text === undefined ? 0 : Buffer.byteLength(text),
      { replayed, tornBytes },
    );
    // Bounds or a TTL lowered since the records were written, and records expired meanwhile.
    const dropped = [...answers.expire(options.now()), ...answers.enforce()];
    if (text === undefined || replayed > 0 || tornBytes > 0 || dropped.length > 0 || !loaded.journalSeqKnown)
      await store.compactNow();
    return store;
  }

  /** Reads the snapshot (or `seed()` when there is none) and replays the journal onto it. */
  private static async read(
    file: string,
    seed: () => BlogState,
    options: StoreOptions,
  ): Promise<Loaded & { readonly journalSeqKnown: boolean }> {
    const journalFile = `${file.slice(0, -'.json'.length)}.journal`;
    let text: string | undefined;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    let snapshot: Snapshot;
    if (text === undefined) {
      const journalText = await readFile(journalFile, 'utf8').catch(() => '');
      if (journalText.length > 0) {
        throw new Error(
          `${journalFile} exists without ${file}; move the data folder away to start from the seed`,
        );
      }
      snapshot = seed();
    } else {
      try {
        snapshot = JSON.parse(text) as Snapshot;
      } catch {
        throw new Error(`the blog data file ${file} is not valid JSON; move it away to start from the seed`);
      }
    }
    const { format: _format, journalSeq, idempotency, ...state } = snapshot;
    const answers = new IdempotencyRecords(options.bounds);
    for (const [key, record] of Object.entries(idempotency ?? {})) answers.set(key, record);
    const { journal, lines, tornBytes } = await Journal.open(journalFile);
    let seq = journalSeq ?? 0;
    let replayed = 0;
    for (const [n, value] of lines.entries()) {
      const line = journalLine(value);
      if (line === undefined) {
        await journal.close();
        throw new Error(
          `the blog journal ${journalFile} has an unknown line ${n + 1}; move the data folder away to start from the seed`,
        );
      }
      if (line.seq <= seq) continue; // already in the snapshot (a crash before the journal was emptied)
      BlogStore.replay(state, answers, line.changes);
      seq = line.seq;
      replayed += 1;
    }
    return {
      state,
      answers,
      journal,
      seq,
      snapshotText: text,
      replayed,
      tornBytes,
      journalSeqKnown: journalSeq !== undefined,
    };
  }

  private static replay(state: BlogState, answers: IdempotencyRecords, changes: readonly Change[]): void {
    const content: ContentChange[] = [];
    for (const change of changes) {
      if (change.op === 'answer') answers.set(change.key, change.record);
      else if (change.op === 'drop') answers.remove(change.key);
      else content.push(change);
    }
    applyChanges(state, content);
  }

  get current(): Readonly<BlogState> {
    return this.state;
  }

  /**
   * Runs `change` on a copy of the state; when it returns a successful outcome the copy becomes the
   * state and its changes (with `reserve`, the idempotency record reserved with them) are journalled
   * before the promise resolves.
   */
  async mutate<T extends { ok: boolean }>(
    change: (draft: BlogState) => T,
    reserve?: Reservation,
  ): Promise<T> {
    this.refuseAfterFailedWrite();
    const draft = structuredClone(this.state);
    const outcome = change(draft);
    if (!outcome.ok) return outcome;
    const changes: Change[] = diffState(this.state, draft);
    this.state = draft;
    if (reserve) changes.push(...this.putAnswer(reserve.key, reserve.record));
    if (changes.length > 0) await this.append(changes);
    return outcome;
  }

  /** Stores the answer of an idempotent request (and drops what the bounds say), journalled. */
  async storeAnswer(key: string, record: IdempotentAnswer): Promise<void> {
    this.refuseAfterFailedWrite();
    await this.append(this.putAnswer(key, record));
  }

  private putAnswer(key: string, record: IdempotentAnswer): Change[] {
    const dropped = this.answers.put(key, record, this.options.now());
    return [{ op: 'answer', key, record }, ...dropped.map((gone): Change => ({ op: 'drop', key: gone }))];
  }

  /** Queues one journal line; resolves once it is written. A due compaction follows it in the queue. */
  private append(changes: readonly Change[]): Promise<void> {
    this.seq += 1;
    const line: JournalLine = { seq: this.seq, changes };
    const written = this.writing.then(() => this.write(line));
    this.writing = written.then(
      () => this.compactWhenDue(),
      () => this.recoverWhenLast(line.seq),
    );
    return written;
  }

  /**
   * Writes a line, unless an earlier one failed: a line queued after it was computed on a memory
   * holding the failed change, so it is refused too (its request gets an error, nothing is kept).
   */
  private async write(line: JournalLine): Promise<void> {
    if (this.failedWrite !== undefined) throw this.refusal();
    try {
      await this.journal.append(line);
    } catch (error) {
      this.failedWrite = { seq: line.seq, recovering: false };
      throw error;
    }
  }

  private refusal(): StoreWriteError {
    return new StoreWriteError(
      'the blog could not write a change to its journal (disk full?); changes are refused until its data is read back from the files',
    );
  }

  /** A change while memory is not known to match the files is refused before it is computed. */
  private refuseAfterFailedWrite(): void {
    if (this.failedWrite === undefined) return;
    if (!this.failedWrite.recovering) this.writing = this.writing.then(() => this.recover());
    throw this.refusal();
  }

  /** After a failed or refused line: the last line queued reads memory back from the files. */
  private async recoverWhenLast(seq: number): Promise<void> {
    if (this.failedWrite !== undefined && seq === this.seq) await this.recover();
  }

  /**
   * Replaces memory with what the files hold (the failed line was cut back by the journal), so no
   * change that was never written stays visible. When the files cannot be read either, changes stay
   * refused and the next one tries again.
   */
  private async recover(): Promise<void> {
    const failed = this.failedWrite;
    if (failed === undefined || failed.recovering) return;
    failed.recovering = true;
    try {
      await this.journal.close().catch(() => undefined);
      const loaded = await BlogStore.read(this.file, () => structuredClone(this.state), this.options);
      this.state = loaded.state;
      this.records = loaded.answers;
      this.journal = loaded.journal;
      // Numbers stay increasing: a line number never written is skipped, never reused.
      this.seq = Math.max(this.seq, loaded.seq);
      this.failedWrite = undefined;
    } catch (error) {
      failed.recovering = false;
      this.options.onCompactionError?.(error);
    }
  }

  /** Folds the journal into a new snapshot once it outgrew it (and `compactBytes`); never fails the queue. */
  private async compactWhenDue(): Promise<void> {
    if (this.journal.bytes < Math.max(this.options.compactBytes, this.snapshotBytes)) return;
    try {
      await this.writeSnapshot();
    } catch (error) {
      // The journal still holds every change: the next line tries again.
      this.options.onCompactionError?.(error);
    }
  }

  private compactNow(): Promise<void> {
    const next = this.writing.then(() => this.writeSnapshot());
    this.writing = next.catch(() => undefined);
    return next;
  }

  /** The state as of the last journal line written (writes are serialised: nothing is in between). */
  private async writeSnapshot(): Promise<void> {
    const snapshot = {
      format: 2,
      journalSeq: this.seq,
      ...this.state,
      idempotency: Object.fromEntries(this.answers.entries()),
    };
    const text = JSON.stringify(snapshot);
    const temp = `${this.file}.${process.pid}.tmp`;
    const handle = await open(temp, 'w');
    try {
      await handle.writeFile(text);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temp, this.file);
    // A crash here leaves journal lines the snapshot holds: `open` skips them by their number.
    await this.journal.clear();
    this.snapshotBytes = Buffer.byteLength(text);
  }

  async flush(): Promise<void> {
    await this.writing;
  }

  /**
   * True once memory is known to match the files: after a failed write, waits for (or starts) the
   * read back. Until then memory may hold a change, or an idempotency reservation, that was never
   * written: a reader that must not mistake one for a fact (the idempotency guard) asks this first.
   * False while the files cannot be read back either.
   */
  async consistent(): Promise<boolean> {
    if (this.failedWrite === undefined) return true;
    if (!this.failedWrite.recovering) this.writing = this.writing.then(() => this.recover());
    await this.writing;
    return this.failedWrite === undefined;
  }

  async close(): Promise<void> {
    await this.flush();
    await this.journal.close();
  }
}
