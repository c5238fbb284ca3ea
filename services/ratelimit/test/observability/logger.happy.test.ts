import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { parseObservabilitySettings } from '../../src/settings/observability.js';

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l.length > 0),
      );
      done();
    },
  });
  return { lines, stream };
}

describe('logger', () => {
  it('LOG_FORMAT=json writes @message, @timestamp and level fields', () => {
    const out = capture();
    const log = createLogger(
      parseObservabilitySettings({ LOG_FORMAT: 'json', LOG_LEVEL: 'debug' }).log,
      out.stream,
    );
    log.debug({ domain: 'rl' }, 'loaded config');
    expect(out.lines).toHaveLength(1);
    const record = JSON.parse(out.lines[0] as string) as Record<string, unknown>;
    expect(record['@message']).toBe('loaded config');
    expect(record.level).toBe('debug');
    expect(record.domain).toBe('rl');
    expect(new Date(record['@timestamp'] as string).toISOString()).toBe(record['@timestamp']);
  });

  it('honours LOG_LEVEL (default warn, as the reference) and writes JSON off a terminal by default', () => {
    const out = capture();
    const log = createLogger(parseObservabilitySettings({}).log, out.stream);
    log.debug('hidden');
    log.warn({ file: 'config.yaml' }, 'config load failed');
    expect(out.lines).toHaveLength(1);
    expect(JSON.parse(out.lines[0] as string)).toMatchObject({
      level: 'warning',
      '@message': 'config load failed',
      file: 'config.yaml',
    });
  });

  it('LOG_FORMAT=text (the specification name) writes one readable line, uncoloured off a terminal', () => {
    const out = capture();
    const log = createLogger(parseObservabilitySettings({ LOG_FORMAT: 'text' }).log, out.stream);
    log.warn({ file: 'config.yaml' }, 'config load failed');
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] WARN.*: config load failed.*"file":"config.yaml"/,
    );
  });

  it('accepts the reference level names case-insensitively', () => {
    const out = capture();
    const log = createLogger(
      parseObservabilitySettings({ LOG_LEVEL: 'ERROR', LOG_FORMAT: 'json' }).log,
      out.stream,
    );
    log.warn('hidden');
    log.error('shown');
    expect(out.lines.map((l) => JSON.parse(l).level)).toEqual(['error']);
  });
});
