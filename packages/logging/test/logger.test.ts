import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, type JsonFields } from '../src/logger.js';
import { redactRequestPath, redactText } from '../src/redact.js';
import { isProbePath } from '../src/request-log.js';
import { LogSettingError, type LogSettings, parseLogSettings } from '../src/settings.js';

function capture(format: LogSettings['format'], jsonFields?: JsonFields) {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  const log = createLogger({ service: 'svc', level: 'debug', format, destination: out, jsonFields });
  return { log, text: () => text };
}

describe('log settings', () => {
  it('has one meaning of LOG_LEVEL and LOG_FORMAT', () => {
    expect(parseLogSettings({})).toEqual({ level: 'info', format: undefined, color: undefined });
    expect(parseLogSettings({}, { level: 'warn' }).level).toBe('warn');
    expect(parseLogSettings({ LOG_LEVEL: 'Warning', LOG_FORMAT: 'text' })).toMatchObject({
      level: 'warn',
      format: 'pretty',
    });
    expect(parseLogSettings({ LOG_FORMAT: 'JSON', NO_COLOR: '1', FORCE_COLOR: '1' })).toMatchObject({
      format: 'json',
      color: false,
    });
    expect(parseLogSettings({ FORCE_COLOR: '1' }).color).toBe(true);
  });

  it('names the wrong setting', () => {
    expect(() => parseLogSettings({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL.*loud/);
    expect(() => parseLogSettings({ LOG_FORMAT: 'logfmt' })).toThrow(LogSettingError);
  });
});

describe('redaction', () => {
  it('removes passwords in URLs and secret query values from any text', () => {
    expect(redactText('connect postgres://app:hunter2@db:5432/x failed')).toBe(
      'connect postgres://app:[REDACTED]@db:5432/x failed',
    );
    expect(redactText('/page?invoice_id=in_1&token=abc&x=1')).toBe(
      '/page?invoice_id=in_1&token=[REDACTED]&x=1',
    );
    expect(redactText('GET /v2/orders?access_key=k1&signature=s1')).not.toMatch(/k1|s1/);
    expect(redactText('plain = text')).toBe('plain = text');
  });

  it('removes secret route parameters from a request path', () => {
    expect(redactRequestPath('/v3/links/tok%2Fen', { token: 'tok/en' })).toBe('/v3/links/[REDACTED]');
    expect(redactRequestPath('/v3/svc_codes/ABCD-1234/check', { code: 'ABCD-1234' })).toBe(
      '/v3/svc_codes/[REDACTED]/check',
    );
    expect(redactRequestPath('/v3/book/tBTCUSD', { symbol: 'tBTCUSD' })).toBe('/v3/book/tBTCUSD');
  });

  it('knows the probe routes', () => {
    for (const p of ['/health', '/healthcheck', '/readyz', '/api/health?x=1'])
      expect(isProbePath(p)).toBe(true);
    expect(isProbePath('/v3/healthy-things')).toBe(false);
  });
});

describe('createLogger', () => {
  it('writes JSON lines with the service and no secret field, string or message', () => {
    const { log, text } = capture('json');
    log.info(
      {
        apiKey: 'key-visible',
        apiSecret: 'S3CRET-A',
        demo: { password: 'S3CRET-B' },
        headers: { authorization: 'Bearer S3CRET-C' },
        url: 'redis://u:S3CRET-D@h:6379',
      },
      'connected to smtp://mail:S3CRET-E@smtp.example',
    );
    log.error({ err: new Error('connect ECONNREFUSED postgres://a:S3CRET-F@x/db') }, 'failed');
    const lines = text().trim().split('\n');
    expect(lines).toHaveLength(2);
    const first = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    expect(first).toMatchObject({ service: 'svc', level: 30, apiKey: 'key-visible' });
    expect(text()).not.toMatch(/S3CRET/);
  });

  it('writes the rate limiter specification fields with logstash names', () => {
    const { log, text } = capture('json', 'logstash');
    log.warn({ err: new Error('boom') }, 'config load failed');
    const line = JSON.parse(text()) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'warning', '@message': 'config load failed' });
    expect(String(line['@timestamp'])).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(line.error).toMatchObject({ message: 'boom' });
  });

  it('writes one readable line per record in the pretty format, without colour off a terminal', () => {
    const { log, text } = capture('pretty');
    log.info({ apiSecret: 'S3CRET-G', status: 200 }, 'hello');
    expect(text()).toMatch(/INFO.*hello/);
    expect(text()).not.toContain('\u001b[');
    expect(text()).not.toContain('S3CRET');
    expect(text().trim().split('\n')).toHaveLength(1);
  });

  it('picks JSON when the destination is not a terminal', () => {
    const { log, text } = capture(undefined);
    log.info('x');
    expect(JSON.parse(text())).toMatchObject({ msg: 'x' });
  });
});
