import { type FileHandle, open, readFile } from 'node:fs/promises';

/**
 * An append-only file of JSON lines, one per committed change (issue 41: the blog rewrote its whole
 * data file per request). A line counts once its `\n` is written: each is written by one append, so
 * a process killed while writing leaves at most a torn last line, without its `\n`, which `open`
 * cuts away (that change was never acknowledged: its request was answered only after the append).
 * A line that does not parse before the last one is corruption and stops the start.
 */

export interface JournalContents {
  readonly journal: Journal;
  /** The complete lines, parsed, in order. */
  readonly lines: readonly unknown[];
  /** Bytes of a torn last line that were cut away (0: none). */
  readonly tornBytes: number;
}

export class Journal {
  private constructor(
    private readonly file: string,
    private readonly handle: FileHandle,
    private length: number,
  ) {}

  /** Reads `file` (created when missing), cuts a torn tail, and opens it for appending. */
  static async open(file: string): Promise<JournalContents> {
    let text = '';
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const end = text.lastIndexOf('\n') + 1;
    const lines: unknown[] = [];
    const complete = text.slice(0, end).split('\n');
    complete.pop(); // after the last `\n`
    for (const [n, line] of complete.entries()) {
      try {
        lines.push(JSON.parse(line));
      } catch {
        throw new Error(
          `the blog journal ${file} is corrupt at line ${n + 1} of ${complete.length}; move the data folder away to start from the seed`,
        );
      }
    }
    const good = Buffer.byteLength(text.slice(0, end));
    const handle = await open(file, 'a');
    const tornBytes = Buffer.byteLength(text) - good;
    if (tornBytes > 0) await handle.truncate(good);
    return { journal: new Journal(file, handle, good), lines, tornBytes };
  }

  /** Bytes of complete lines. */
  get bytes(): number {
    return this.length;
  }

  get path(): string {
    return this.file;
  }

  /**
   * Appends one line. Callers serialise their appends (the store's write chain). A failed write
   * (disk full) is cut back to the last complete line, so no later line follows a torn one.
   */
  async append(entry: object): Promise<void> {
    const line = Buffer.from(`${JSON.stringify(entry)}\n`);
    try {
      await this.handle.appendFile(line);
    } catch (error) {
      await this.handle.truncate(this.length).catch(() => undefined);
      throw error;
    }
    this.length += line.length;
  }

  /** Empties the journal (its lines are in a snapshot now). */
  async clear(): Promise<void> {
    await this.handle.truncate(0);
    this.length = 0;
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}
