import { appendFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The final outcome of a mutation that left the queue, so that a client holding a `queueId` can learn
 * what became of it (`GET /queue/{id}`): `sent` with the upstream's answer, or `discarded` by an
 * operator (with the error it was rejected with, if any). Kept in memory and appended to
 * `<QUEUE_DIR>/outcomes.jsonl` (one JSON record a line), the newest `keep` records only.
 */
export interface QueueOutcome {
  readonly id: string;
  readonly status: 'sent' | 'discarded';
  readonly at: string;
  readonly createdAt: string;
  readonly attempts: number;
  /** For `sent`: the upstream's HTTP status and GraphQL answer. */
  readonly upstreamStatus?: number | undefined;
  readonly response?: unknown;
  /**
   * For `sent`: true when the answer is the one the upstream had stored for the mutation's idempotency
   * key (a replayer died after sending it; the next one asked instead of sending it again).
   */
  readonly recovered?: boolean | undefined;
  /** For `discarded`: the errors it had been rejected with, when it had been. */
  readonly errors?: readonly unknown[] | undefined;
}

export interface OutcomeLog {
  get(id: string): QueueOutcome | undefined;
  record(outcome: QueueOutcome): Promise<void>;
}

export class FileOutcomeLog implements OutcomeLog {
  private readonly outcomes = new Map<string, QueueOutcome>();
  private lines = 0;
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly file: string,
    private readonly keep: number,
  ) {}

  static async open(dir: string, keep: number): Promise<FileOutcomeLog> {
    await mkdir(dir, { recursive: true });
    const log = new FileOutcomeLog(path.join(dir, 'outcomes.jsonl'), keep);
    let text = '';
    try {
      text = await readFile(log.file, 'utf8');
    } catch {
      return log;
    }
    for (const line of text.split('\n')) {
      if (line === '') continue;
      log.lines += 1;
      try {
        const outcome = JSON.parse(line) as QueueOutcome;
        if (typeof outcome.id === 'string') log.remember(outcome);
      } catch {
        // A line cut short by a crash is skipped; the rest of the log is still good.
      }
    }
    return log;
  }

  get(id: string): QueueOutcome | undefined {
    return this.outcomes.get(id);
  }

  private remember(outcome: QueueOutcome): void {
    this.outcomes.delete(outcome.id);
    this.outcomes.set(outcome.id, outcome);
    if (this.outcomes.size > this.keep) {
      const oldest = this.outcomes.keys().next();
      if (!oldest.done) this.outcomes.delete(oldest.value);
    }
  }

  /** Appends one line (O(1)); when the file holds twice `keep` lines it is rewritten with the newest. */
  record(outcome: QueueOutcome): Promise<void> {
    this.remember(outcome);
    this.lines += 1;
    const compact = this.lines > 2 * this.keep;
    if (compact) this.lines = this.outcomes.size;
    const next = this.writing.then(async () => {
      if (!compact) {
        await appendFile(this.file, `${JSON.stringify(outcome)}\n`, { mode: 0o600 });
        return;
      }
      const text = [...this.outcomes.values()].map((item) => `${JSON.stringify(item)}\n`).join('');
      const temp = `${this.file}.tmp`;
      await writeFile(temp, text, { mode: 0o600 });
      await rename(temp, this.file);
    });
    this.writing = next.catch(() => undefined);
    return next;
  }
}

/** Not durable: for tests and unit use. */
export class MemoryOutcomeLog implements OutcomeLog {
  private readonly outcomes = new Map<string, QueueOutcome>();

  get(id: string): QueueOutcome | undefined {
    return this.outcomes.get(id);
  }

  async record(outcome: QueueOutcome): Promise<void> {
    this.outcomes.set(outcome.id, outcome);
  }
}
