/**
 * Who sends a subscription's messages: one instance at a time. On PostgreSQL a session advisory
 * lock per subscription, taken on a connection of its own: it lasts while that connection does, so
 * an instance that dies (SIGKILL included) lets go at once (the server sees the socket close), and
 * one that is only stopped (SIGSTOP) keeps its subscriptions, so no other instance sends them
 * meanwhile and their order holds. With PGlite one process owns the database: a set in memory.
 */
import pg from 'pg';

export interface SubscriptionLocks {
  /** Takes the subscription unless another instance (or this one) has it. */
  tryAcquire(id: string): Promise<boolean>;
  release(id: string): Promise<void>;
  /** Whether the lock is still held: false once the lock connection is lost. */
  holds(id: string): boolean;
  close(): Promise<void>;
}

export function createLocalLocks(): SubscriptionLocks {
  const held = new Set<string>();
  return {
    async tryAcquire(id) {
      if (held.has(id)) return false;
      held.add(id);
      return true;
    },
    async release(id) {
      held.delete(id);
    },
    holds: (id) => held.has(id),
    async close() {
      held.clear();
    },
  };
}

/** The advisory lock space of webhook subscriptions (`pg_try_advisory_lock(int, int)`'s first key). */
const LOCK_SPACE = 3_300_045;
/** `application_name` of the lock connection, with the process id: operators and tests find the sender. */
export const LOCK_APPLICATION_NAME = 'events-webhook-sender';

export function createPgLocks(url: string, onError?: (error: Error) => void): SubscriptionLocks {
  let client: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  const held = new Set<string>();
  let closed = false;

  const lost = (which: pg.Client, error?: Error): void => {
    if (error) onError?.(error);
    if (client !== which) return;
    // The server released every lock of the session with it.
    client = undefined;
    held.clear();
    which.end().catch(() => undefined);
  };

  const connection = (): Promise<pg.Client> => {
    if (client !== undefined) return Promise.resolve(client);
    if (connecting !== undefined) return connecting;
    const next = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: 5_000,
      application_name: `${LOCK_APPLICATION_NAME}:${process.pid}`,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    next.on('error', (error) => lost(next, error));
    next.on('end', () => lost(next));
    connecting = next.connect().then(
      () => {
        connecting = undefined;
        client = next;
        return next;
      },
      (error: unknown) => {
        connecting = undefined;
        throw error;
      },
    );
    return connecting;
  };

  // One statement at a time on the connection (pg deprecates queueing on a busy client).
  let tail: Promise<unknown> = Promise.resolve();
  const serially = <T>(work: () => Promise<T>): Promise<T> => {
    const run = tail.then(work, work);
    tail = run.catch(() => undefined);
    return run;
  };

  return {
    async tryAcquire(id) {
      if (closed || held.has(id)) return false;
      const session = await connection();
      const rows = await serially(() =>
        session.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [
          LOCK_SPACE,
          id,
        ]),
      );
      const ok = rows.rows[0]?.ok === true;
      if (ok && client === session) held.add(id);
      return ok && held.has(id);
    },
    async release(id) {
      if (!held.delete(id)) return;
      const session = client;
      if (session === undefined) return;
      await serially(() =>
        session.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_SPACE, id]),
      ).catch((error: unknown) => {
        onError?.(error instanceof Error ? error : new Error(String(error)));
      });
    },
    holds: (id) => held.has(id),
    async close() {
      closed = true;
      held.clear();
      const session = client;
      client = undefined;
      await session?.end().catch(() => undefined);
    },
  };
}
