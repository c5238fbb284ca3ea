import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** One cached GraphQL answer. `body` is the upstream's JSON text, kept verbatim. */
export interface StoredEntry {
  readonly key: string;
  readonly storedAt: number;
  readonly tags: readonly string[];
  readonly invalidated: boolean;
  /** This entry's freshness lifetime (upstream max-age or per-type TTL); absent: CACHE_TTL_SECONDS. */
  readonly ttlMs?: number | undefined;
  readonly body: string;
}

/**
 * Where cached answers live. `read` of a missing or corrupt entry is `undefined` (a corrupt entry is
 * also removed), never an exception; `list` skips and removes corrupt entries.
 */
export interface CacheStore {
  list(): Promise<StoredEntry[]>;
  read(key: string): Promise<StoredEntry | undefined>;
  write(entry: StoredEntry): Promise<void>;
  remove(key: string): Promise<void>;
}

const KEY_PATTERN = /^[0-9a-f]{64}$/;

function decode(text: string, key: string): StoredEntry | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<StoredEntry> & { body?: unknown };
    if (
      parsed.key !== key ||
      typeof parsed.storedAt !== 'number' ||
      !Array.isArray(parsed.tags) ||
      typeof parsed.body !== 'object' ||
      parsed.body === null
    ) {
      return undefined;
    }
    return {
      key,
      storedAt: parsed.storedAt,
      tags: parsed.tags.filter((tag): tag is string => typeof tag === 'string'),
      invalidated: parsed.invalidated === true,
      ttlMs: typeof parsed.ttlMs === 'number' ? parsed.ttlMs : undefined,
      body: JSON.stringify(parsed.body),
    };
  } catch {
    return undefined;
  }
}

/**
 * One file per entry, `<dir>/<key>.json`, holding the metadata and the upstream body as a JSON object
 * (so the files stay readable). Written to a temporary file and renamed, so a reader or a crash never
 * sees half a file.
 */
export class FileCacheStore implements CacheStore {
  private constructor(private readonly dir: string) {}

  static async open(dir: string): Promise<FileCacheStore> {
    await mkdir(dir, { recursive: true });
    return new FileCacheStore(dir);
  }

  private file(key: string): string {
    return path.join(this.dir, `${key}.json`);
  }

  async list(): Promise<StoredEntry[]> {
    const entries: StoredEntry[] = [];
    for (const name of await readdir(this.dir)) {
      if (name.endsWith('.tmp')) {
        await rm(path.join(this.dir, name), { force: true });
        continue;
      }
      const key = name.slice(0, -'.json'.length);
      if (!name.endsWith('.json') || !KEY_PATTERN.test(key)) continue;
      const entry = await this.read(key);
      if (entry) entries.push(entry);
    }
    return entries;
  }

  async read(key: string): Promise<StoredEntry | undefined> {
    let text: string;
    try {
      text = await readFile(this.file(key), 'utf8');
    } catch {
      return undefined;
    }
    const entry = decode(text, key);
    if (entry === undefined) await rm(this.file(key), { force: true });
    return entry;
  }

  async write(entry: StoredEntry): Promise<void> {
    const text =
      `{"key":${JSON.stringify(entry.key)},"storedAt":${entry.storedAt},"tags":${JSON.stringify(entry.tags)},` +
      `"invalidated":${entry.invalidated},${entry.ttlMs === undefined ? '' : `"ttlMs":${entry.ttlMs},`}"body":${entry.body}}`;
    const temp = path.join(this.dir, `${entry.key}.${randomBytes(6).toString('hex')}.tmp`);
    await writeFile(temp, text);
    await rename(temp, this.file(entry.key));
  }

  async remove(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }
}

/** In-process store: for tests, and for instances that should not touch the disk. */
export class MemoryCacheStore implements CacheStore {
  private readonly entries = new Map<string, StoredEntry>();

  async list(): Promise<StoredEntry[]> {
    return [...this.entries.values()];
  }

  async read(key: string): Promise<StoredEntry | undefined> {
    return this.entries.get(key);
  }

  async write(entry: StoredEntry): Promise<void> {
    this.entries.set(entry.key, entry);
  }

  async remove(key: string): Promise<void> {
    this.entries.delete(key);
  }
}
