import { createHash } from 'node:crypto';
import type { RedisClient } from './redis.js';

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
  private readonly sha: string;

  constructor(private readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  async run(
    client: RedisClient,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(this.lua, keys.length, ...keys, ...args);
    }
  }

  /** `run` with bulk strings answered as Buffers (a cached body is not decoded and encoded again). */
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
