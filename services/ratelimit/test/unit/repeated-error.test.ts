import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { RepeatedErrorLog } from '../../src/logging/repeated-error.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: pino(sink) };
}

describe('RepeatedErrorLog', () => {
  it('logs the first failure at once, counts those within the interval, and names the count on the next line', () => {
    const { lines, logger } = capture();
    let now = 1_000;
    const log = new RepeatedErrorLog(logger, 'backend failed', 1000, () => now);
    log.report(new Error('one'));
    for (let i = 0; i < 500; i++) {
      now += 1;
      log.report(new Error('again'));
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'backend failed', err: { message: 'one' } });
    expect(lines[0]).not.toHaveProperty('suppressed');
    now = 2_000; // 1000 ms after the logged one
    log.report(new Error('later'));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ msg: 'backend failed', suppressed: 500, err: { message: 'later' } });
    now = 3_500;
    log.report(new Error('alone'));
    expect(lines).toHaveLength(3);
    expect(lines[2]).not.toHaveProperty('suppressed');
  });
});
