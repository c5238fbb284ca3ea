import { describe, expect, it } from 'vitest';
import { LogSettingError, parseLogSettings } from '../src/settings.js';

class ServiceConfigError extends Error {
  constructor(
    readonly setting: string,
    detail: string,
  ) {
    super(`${setting}: ${detail}`);
  }
}

describe('parseLogSettings', () => {
  it('reads the level and format, with the default level given', () => {
    expect(parseLogSettings({ LOG_FORMAT: 'text' }, { level: 'warn' })).toEqual({
      level: 'warn',
      format: 'pretty',
      color: undefined,
    });
  });

  it('throws a LogSettingError naming the setting by default', () => {
    expect(() => parseLogSettings({ LOG_LEVEL: 'loud' })).toThrow(LogSettingError);
  });

  it("throws the service's own error when given `fail`", () => {
    const fail = (setting: string, detail: string) => new ServiceConfigError(setting, detail);
    expect(() => parseLogSettings({ LOG_FORMAT: 'xml' }, { fail })).toThrow(ServiceConfigError);
    const thrown = (() => {
      try {
        parseLogSettings({ LOG_LEVEL: 'loud' }, { fail });
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(ServiceConfigError);
    expect((thrown as ServiceConfigError).setting).toBe('LOG_LEVEL');
  });
});
