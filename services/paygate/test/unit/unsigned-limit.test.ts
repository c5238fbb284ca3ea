import { describe, expect, it } from 'vitest';
import { limitSubject, verdict, windowStart } from '../../src/unsigned-limit/window.js';

const settings = { perAddress: 3, windowSeconds: 60 };

describe('the limit on unsigned invoice creates (pure)', () => {
  it('counts in fixed windows aligned to the epoch and refuses past the limit until the window ends', () => {
    const t = 1_767_225_630_500; // 30.5 s into a minute
    expect(windowStart(settings, t)).toBe(1_767_225_600);
    expect(windowStart(settings, t + 29_499)).toBe(1_767_225_600);
    expect(windowStart(settings, t + 29_500)).toBe(1_767_225_660);
    expect(verdict(settings, 3, t)).toEqual({ allowed: true });
    expect(verdict(settings, 4, t)).toEqual({ allowed: false, retryAfterSeconds: 30 });
    expect(verdict(settings, 4, t + 29_400)).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(verdict({ perAddress: 0, windowSeconds: 60 }, 1, t).allowed).toBe(false);
  });

  it('counts an IPv4 address alone, its IPv4-mapped spelling as the same, and IPv6 by its /64', () => {
    expect(limitSubject('203.0.113.7')).toBe('203.0.113.7');
    expect(limitSubject('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(limitSubject('::FFFF:203.0.113.7')).toBe('203.0.113.7');
    const subnet = '2001:db8:0:1::/64';
    for (const address of [
      '2001:db8:0:1::1',
      '2001:db8:0:1:ffff:ffff:ffff:ffff',
      '2001:0db8:0000:0001:0000:0000:0000:0002',
      '2001:DB8:0:1::abcd',
      '2001:db8:0:1::1%eth0',
    ]) {
      expect(limitSubject(address)).toBe(subnet);
    }
    expect(limitSubject('2001:db8:0:2::1')).not.toBe(subnet);
    expect(limitSubject('::1')).toBe('0:0:0:0::/64');
    expect(limitSubject('2001:db8::')).toBe('2001:db8:0:0::/64');
    expect(limitSubject('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
  });
});
