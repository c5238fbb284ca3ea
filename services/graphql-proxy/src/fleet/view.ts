import type { QueueAccess } from '../queue/access.js';
import type { RedisQueue } from '../queue/redis-queue.js';
import type { Fleet } from './open.js';

/** One instance as it announces itself in the fleet (`{prefix}:instances`, refreshed every second). */
export interface InstanceBeat {
  readonly id: string;
  readonly pid: number;
  readonly port: number | undefined;
  readonly mode: string;
  readonly startedAt: string;
  readonly seenAt: number;
}

const BEAT_MS = 1000;
/** An instance not heard of for this long is left out of the view (and removed). */
const GONE_MS = 5 * BEAT_MS;

/** Announces this instance every second while it runs. */
export function startHeartbeat(fleet: Fleet, describe: () => Omit<InstanceBeat, 'seenAt'>): () => void {
  const key = fleet.keys.key('instances');
  const beat = () => {
    if (!fleet.ready()) return;
    const self = { ...describe(), seenAt: Date.now() };
    fleet.client.hset(key, self.id, JSON.stringify(self)).catch(() => undefined);
  };
  beat();
  const timer = setInterval(beat, BEAT_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    fleet.client.hdel(key, describe().id).catch(() => undefined);
  };
}

/**
 * The fleet part of `GET /health`: Redis reachable or not, the instances heard of lately, which one
 * holds the replay lease. Answered from what can be read now: with Redis down, `redis: "down"` and
 * the fleet-wide parts null.
 */
export async function fleetView(
  fleet: Fleet,
  redisQueue: RedisQueue | undefined,
  replayingHere: boolean,
  cacheStore: string,
  queueStore: string,
): Promise<Record<string, unknown>> {
  const base = {
    instanceId: fleet.instanceId,
    cacheStore,
    queueStore,
    redis: fleet.ready() ? 'up' : 'down',
    replayingHere,
    invalidationOwed: fleet.cache?.invalidationOwed ?? false,
  };
  if (!fleet.ready()) return { ...base, replayer: null, instances: null };
  try {
    const now = Date.now();
    const key = fleet.keys.key('instances');
    const beats = Object.values(await fleet.client.hgetall(key))
      .map((text) => JSON.parse(text) as InstanceBeat)
      .filter((beat) => {
        if (now - beat.seenAt <= GONE_MS) return true;
        void fleet.client.hdel(key, beat.id).catch(() => undefined);
        return false;
      })
      .sort((a, b) => a.id.localeCompare(b.id));
    const holder = redisQueue ? await redisQueue.leaseHolder() : undefined;
    return {
      ...base,
      replayer: holder ? holder.split('|')[0] : null,
      replayerToken: holder ? Number(holder.split('|')[1]) : null,
      instances: beats.map(({ id, pid, port, mode, startedAt }) => ({ id, pid, port, mode, startedAt })),
    };
  } catch {
    return { ...base, redis: 'down', replayer: null, instances: null };
  }
}

/** `QueueAccess` is enough for the queue part; re-exported for the route's typing. */
export type { QueueAccess };
