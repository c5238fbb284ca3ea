import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface QueuedPayload {
  readonly query: string;
  readonly variables: Record<string, unknown> | null;
  readonly operationName: string | null;
}

export interface QueueError {
  readonly message: string;
  readonly code?: string | undefined;
  readonly upstreamStatus?: number | undefined;
  /** The upstream's `errors` array, verbatim, when it rejected the mutation. */
  readonly errors?: readonly unknown[] | undefined;
  readonly at: string;
}

/** A mutation waiting to be replayed upstream. */
export interface QueuedMutation {
  readonly id: string;
  /** Position in the queue; replay follows increasing `seq`. */
  readonly seq: number;
  readonly createdAt: string;
  readonly payload: QueuedPayload;
  /** Sent as `Idempotency-Key` on every attempt, so a replay after a lost answer is not applied twice. */
  readonly idempotencyKey: string;
  /** The caller's own Authorization header, when it sent one (otherwise AUTH_TOKEN is used). */
  readonly authorization?: string | undefined;
  /** `rejected`: the upstream answered with errors; replay stops here until retried or discarded. */
  status: 'pending' | 'rejected';
  attempts: number;
  lastError?: QueueError | undefined;
  /** Epoch ms before which a replay attempt is not made (backoff), unless forced. */
  nextAttemptAt: number;
  /**
   * It may have reached the upstream (a send was started, or ended without an answer): the next
   * replay asks the upstream what became of its idempotency key before sending it (proxy/replay-step.ts).
   */
  maybeSent?: boolean | undefined;
}

/** Durable storage of queued mutations. `load` skips (and sets aside) corrupt records. */
export interface QueueStore {
  load(): Promise<QueuedMutation[]>;
  save(item: QueuedMutation): Promise<void>;
  remove(item: QueuedMutation): Promise<void>;
}

function fileName(item: Pick<QueuedMutation, 'seq' | 'id'>): string {
  return `${String(item.seq).padStart(12, '0')}-${item.id}.json`;
}

function isQueuedMutation(value: unknown): value is QueuedMutation {
  if (value === null || typeof value !== 'object') return false;
  const item = value as Record<string, unknown>;
  const payload = item['payload'] as Record<string, unknown> | undefined;
  return (
    typeof item['id'] === 'string' &&
    typeof item['seq'] === 'number' &&
    typeof item['idempotencyKey'] === 'string' &&
    typeof payload?.['query'] === 'string' &&
    (item['status'] === 'pending' || item['status'] === 'rejected')
  );
}

/**
 * One file per mutation, named `<seq>-<id>.json` so the directory listing is the queue order; each
 * written atomically (temporary file + rename) with mode 0600, since a record may hold a caller's
 * Authorization header. A corrupt record is renamed to `*.corrupt` and reported, never replayed.
 */
export class FileQueueStore implements QueueStore {
  private constructor(
    private readonly dir: string,
    private readonly onCorrupt: (file: string) => void,
  ) {}

  static async open(
    dir: string,
    onCorrupt: (file: string) => void = () => undefined,
  ): Promise<FileQueueStore> {
    await mkdir(dir, { recursive: true });
    return new FileQueueStore(dir, onCorrupt);
  }

  async load(): Promise<QueuedMutation[]> {
    const items: QueuedMutation[] = [];
    for (const name of (await readdir(this.dir)).sort()) {
      const file = path.join(this.dir, name);
      if (name.endsWith('.tmp')) {
        await rm(file, { force: true });
        continue;
      }
      if (!name.endsWith('.json')) continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(await readFile(file, 'utf8'));
      } catch {
        parsed = undefined;
      }
      if (!isQueuedMutation(parsed) || fileName(parsed) !== name) {
        await rename(file, `${file}.corrupt`);
        this.onCorrupt(file);
        continue;
      }
      items.push(parsed);
    }
    return items.sort((a, b) => a.seq - b.seq);
  }

  async save(item: QueuedMutation): Promise<void> {
    const temp = path.join(this.dir, `${item.id}.${randomBytes(6).toString('hex')}.tmp`);
    await writeFile(temp, JSON.stringify(item, null, 2), { mode: 0o600 });
    await rename(temp, path.join(this.dir, fileName(item)));
  }

  async remove(item: QueuedMutation): Promise<void> {
    await rm(path.join(this.dir, fileName(item)), { force: true });
  }
}

/** In-process queue storage (not durable): for tests and for a proxy without a disk. */
export class MemoryQueueStore implements QueueStore {
  private readonly items = new Map<string, QueuedMutation>();

  async load(): Promise<QueuedMutation[]> {
    return [...this.items.values()].map((item) => structuredClone(item)).sort((a, b) => a.seq - b.seq);
  }

  async save(item: QueuedMutation): Promise<void> {
    this.items.set(item.id, structuredClone(item));
  }

  async remove(item: QueuedMutation): Promise<void> {
    this.items.delete(item.id);
  }
}
