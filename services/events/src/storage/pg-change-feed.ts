/**
 * `LISTEN events_changed` on a dedicated PostgreSQL connection (the trigger of migration 2 sends a
 * NOTIFY after every statement that changes `events`). When the connection drops the feed reports
 * itself down, reconnects with backoff, and reports up again; the cache clears on both edges.
 */
import pg from 'pg';
import type { ChangeFeed } from './cached-event-store.js';

export const CHANGE_CHANNEL = 'events_changed';
/** `application_name` of the LISTEN connection, so operators (and tests) can find it in pg_stat_activity. */
export const FEED_APPLICATION_NAME = 'events-change-feed';

/**
 * `onLag` hears, for each notification that carries its time (migration 6), the seconds from the
 * statement to its notification received here (the database's clock against this host's: a skew
 * between them shows in it).
 */
export function createPgChangeFeed(
  url: string,
  onError?: (error: Error) => void,
  onLag?: (seconds: number) => void,
): ChangeFeed {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let delayMs = 100;

  const connect = async (onChange: () => void, onState: (live: boolean) => void): Promise<void> => {
    const next = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: 5_000,
      application_name: FEED_APPLICATION_NAME,
      // TCP keep-alive, so a connection that dies silently (no FIN) is noticed and the cache bypassed.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    const lost = (error?: Error): void => {
      if (error) onError?.(error);
      if (client !== next) return;
      client = undefined;
      onState(false);
      next.end().catch(() => undefined);
      if (stopped) return;
      retry = setTimeout(() => void connect(onChange, onState).catch(() => undefined), delayMs);
      retry.unref();
      delayMs = Math.min(delayMs * 2, 5_000);
    };
    next.on('notification', (message) => {
      if (onLag && message.payload) {
        const sentAtMs = Number(message.payload);
        if (Number.isFinite(sentAtMs)) onLag(Math.max(0, Date.now() - sentAtMs) / 1000);
      }
      onChange();
    });
    next.on('error', lost);
    next.on('end', () => lost());
    client = next;
    try {
      await next.connect();
      await next.query(`LISTEN ${CHANGE_CHANNEL}`);
    } catch (error) {
      lost(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    delayMs = 100;
    onState(true);
  };

  return {
    start: (onChange, onState) => connect(onChange, onState),
    async stop() {
      stopped = true;
      if (retry !== undefined) clearTimeout(retry);
      const current = client;
      client = undefined;
      await current?.end().catch(() => undefined);
    },
  };
}
