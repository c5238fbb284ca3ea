import { createHash } from 'node:crypto';
import { Command } from 'ioredis';
import type { RedisClient } from './redis.js';

/**
 * Sends one command at once, outside auto-pipelining (which ioredis defers to the next turn of the
 * event loop): a cache write or a queue step then reaches Redis before the answer the proxy writes
 * next reaches its client, so a client's next request, to any instance, sees it.
 */
function sendNow(client: RedisClient, name: string, args: readonly (string | number)[]): Promise<unknown> {
  const command = new Command(name, [...args], { replyEncoding: 'utf8' });
  client.sendCommand(command);
  return command.promise;
}

/**
 * The Buffer-answering forms of EVALSHA and EVAL, which ioredis defines for every command at run time
 * but does not declare. (`callBuffer('evalsha', ...)` is declared, but with auto-pipelining on, ioredis
 * 5 drops its command name and sends the sha as the command.)
 */
interface BufferScripting {
  evalshaBuffer(sha: string, keyCount: number, ...rest: (string | number)[]): Promise<unknown>;
  evalBuffer(lua: string, keyCount: number, ...rest: (string | number)[]): Promise<unknown>;
}

/**
 * A Lua script run with EVALSHA (one round trip), loaded with EVAL the first time a server does not
 * know it (a new or restarted Redis). Scripts run atomically: the fleet's only coordination.
 */
export class RedisScript {
  /** Every script of the proxy, loaded into a server as soon as a connection to it is ready. */
  private static readonly all: RedisScript[] = [];
  private readonly sha: string;

  constructor(private readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
    RedisScript.all.push(this);
  }

  /**
   * Loads every script (SCRIPT LOAD) into the server behind `client`. Without it the first call of
   * each script after a (re)start takes two round trips (NOSCRIPT, then EVAL), long enough for a cache
   * write sent just before a lookup from another instance to land after it (a miss that should hit).
   * A failure is harmless: `run` still falls back to EVAL. (In a cluster this reaches one node; the
   * others still load on first use.)
   */
  static async preload(client: RedisClient): Promise<void> {
    await Promise.all(RedisScript.all.map((script) => client.script('LOAD', script.lua)));
  }

  async run(
    client: RedisClient,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    try {
      return await sendNow(client, 'evalsha', [this.sha, keys.length, ...keys, ...args]);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return sendNow(client, 'eval', [this.lua, keys.length, ...keys, ...args]);
    }
  }

  /**
   * `run` for the cache lookup, auto-pipelined (the lookups of one tick leave in one write), with bulk
   * strings answered as Buffers (a cached body is not decoded and encoded again).
   */
  async runBuffer(
    client: RedisClient,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    const buffers = client as unknown as BufferScripting;
    try {
      return await buffers.evalshaBuffer(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return buffers.evalBuffer(this.lua, keys.length, ...keys, ...args);
    }
  }
}
