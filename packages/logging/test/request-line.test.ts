import { PassThrough } from 'node:stream';
import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { writeRequestLine } from '../src/request-line.js';

const line = { method: 'GET', path: '/events/a', status: 200, durationMs: 1.234 };

describe('the request line', () => {
  it('is written at info, and not at all when info is off', () => {
    for (const [level, expected] of [
      ['info', 1],
      ['warn', 0],
    ] as const) {
      const out = new PassThrough();
      let text = '';
      out.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
      });
      const log = createLogger({ service: 'svc', level, format: 'json', destination: out });
      writeRequestLine(log, line);
      log.flush();
      expect(text.split('\n').filter((l) => l.includes('GET /events/a 200'))).toHaveLength(expected);
    }
  });

  it("goes to a logger without isLevelEnabled (Fastify's own when logging is off) without throwing", () => {
    const calls: unknown[] = [];
    const noop = { info: (...args: unknown[]) => calls.push(args), debug: () => {} } as unknown as Logger;
    expect(() => writeRequestLine(noop, line)).not.toThrow();
    expect(calls).toHaveLength(1);
  });
});
