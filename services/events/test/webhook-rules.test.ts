/**
 * The pure rules of webhooks: what each subscriber receives for a change, the payload, the
 * signature (checked with the npm `standardwebhooks` library's verify()), the retry schedule and
 * `retry-after`, and which targets are allowed.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import {
  EVENT_TYPES,
  type EventState,
  type LoggedChange,
  messageTypeFor,
  payloadOf,
  type Subscriber,
  secretFrom,
  signatureHeader,
} from '../src/webhooks/messages.js';
import {
  parseRetryAfter,
  RETRY_AFTER_MAX_MS,
  retryDelayMs,
  scheduleSpanSeconds,
} from '../src/webhooks/retry.js';
import { DEFAULT_RETRY_SCHEDULE } from '../src/webhooks/settings.js';
import { checkTargetUrl, forbiddenAddress } from '../src/webhooks/targets.js';

const at = new Date('2026-05-01T10:00:00.000Z');
function change(
  before: EventState | null,
  after: EventState | null,
  extra: Partial<LoggedChange> = {},
): LoggedChange {
  return {
    seq: 1n,
    kind: 'event',
    eventId: 'ev-1',
    target: null,
    messageId: 'msg_1',
    changedAt: at,
    before,
    after,
    snapshot: {
      name: 'Launch',
      body: 'Doors at six',
      cover: null,
      date: '2026-12-01T18:00:00Z',
      createdAt: at,
      updatedAt: at,
    },
    ...extra,
  };
}
const publicBy = (createdBy: string): EventState => ({ access: 'PUBLIC', createdBy });
const privateBy = (createdBy: string): EventState => ({ access: 'PRIVATE', createdBy });
const subscriber = (owner: string, member = false, types = [...EVENT_TYPES]): Subscriber => ({
  id: `wh_${owner}`,
  owner,
  member,
  types,
});

describe('what a subscriber receives', () => {
  it('reads each change from the subscriber side', () => {
    const stranger = subscriber('bob');
    const creator = subscriber('alice');
    const member = subscriber('carol', true);
    const cases: [EventState | null, EventState | null, string | null, string | null, string | null][] = [
      // before, after, stranger, creator, member
      [null, publicBy('alice'), 'event.created', 'event.created', 'event.created'],
      [null, privateBy('alice'), null, 'event.created', 'event.created'],
      [publicBy('alice'), publicBy('alice'), 'event.updated', 'event.updated', 'event.updated'],
      [publicBy('alice'), privateBy('alice'), 'event.deleted', 'event.updated', 'event.updated'],
      [privateBy('alice'), publicBy('alice'), 'event.created', 'event.updated', 'event.updated'],
      [privateBy('alice'), privateBy('alice'), null, 'event.updated', 'event.updated'],
      [publicBy('alice'), null, 'event.deleted', 'event.deleted', 'event.deleted'],
      [privateBy('alice'), null, null, 'event.deleted', 'event.deleted'],
    ];
    for (const [before, after, s, c, m] of cases) {
      const logged = change(before, after);
      expect([
        messageTypeFor(logged, stranger),
        messageTypeFor(logged, creator),
        messageTypeFor(logged, member),
      ]).toEqual([s, c, m]);
    }
  });

  it('filters by the types asked for; a test message goes to its subscription only, whatever its types', () => {
    const onlyDeletes = subscriber('bob', false, ['event.deleted']);
    expect(messageTypeFor(change(null, publicBy('a')), onlyDeletes)).toBeNull();
    expect(messageTypeFor(change(publicBy('a'), null), onlyDeletes)).toBe('event.deleted');
    const test = change(null, null, { kind: 'test', eventId: null, target: 'wh_bob', snapshot: null });
    expect(messageTypeFor(test, onlyDeletes)).toBe('webhook.test');
    expect(messageTypeFor(test, subscriber('alice'))).toBeNull();
  });

  it('sends the event as GET answers it, only the id once it is gone, the same bytes every time', () => {
    const created = JSON.parse(payloadOf(change(null, publicBy('alice')), 'event.created'));
    expect(created).toEqual({
      type: 'event.created',
      timestamp: '2026-05-01T10:00:00.000Z',
      data: {
        eventId: 'ev-1',
        name: 'Launch',
        body: 'Doors at six',
        date: '2026-12-01T18:00:00Z',
        access: 'PUBLIC',
        createdAt: '2026-05-01T10:00:00.000Z',
        createdBy: 'alice',
        updatedAt: '2026-05-01T10:00:00.000Z',
      },
    });
    // A stranger's event.deleted for an event made PRIVATE carries no PRIVATE content.
    const hidden = payloadOf(change(publicBy('alice'), privateBy('alice')), 'event.deleted');
    expect(JSON.parse(hidden)).toEqual({
      type: 'event.deleted',
      timestamp: at.toISOString(),
      data: { eventId: 'ev-1' },
    });
    expect(payloadOf(change(null, publicBy('a')), 'event.created')).toBe(
      payloadOf(change(null, publicBy('a')), 'event.created'),
    );
  });
});

describe('signatures', () => {
  it('verify with standardwebhooks, with either secret during a rotation, and refuse a tampered body', () => {
    const current = secretFrom(randomBytes(32));
    const previous = secretFrom(randomBytes(32));
    expect(current).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = payloadOf(change(null, publicBy('alice')), 'event.created');
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader([current, previous], 'msg_1', timestamp, body),
    };
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secretFrom(randomBytes(32))).verify(body, headers)).toThrow();
    expect(() => new Webhook(current).verify(body.replace('Launch', 'Lunch'), headers)).toThrow();
    expect(() => new Webhook(current).verify(body, { ...headers, 'webhook-id': 'msg_2' })).toThrow();
    // The library's own signature of the same content is ours.
    expect(new Webhook(current).sign('msg_1', new Date(timestamp * 1000), body)).toBe(
      signatureHeader([current], 'msg_1', timestamp, body),
    );
  });
});

describe('retries', () => {
  it('the default schedule retries for more than 24 hours, with jitter of ±20%, then gives up', () => {
    expect(scheduleSpanSeconds(DEFAULT_RETRY_SCHEDULE)).toBeGreaterThanOrEqual(24 * 3600);
    expect(retryDelayMs(1, DEFAULT_RETRY_SCHEDULE, () => 0)).toBe(4_000);
    expect(retryDelayMs(1, DEFAULT_RETRY_SCHEDULE, () => 1)).toBe(6_000);
    expect(retryDelayMs(2, DEFAULT_RETRY_SCHEDULE, () => 0.5)).toBe(300_000);
    expect(retryDelayMs(DEFAULT_RETRY_SCHEDULE.length, DEFAULT_RETRY_SCHEDULE, () => 0.5)).toBe(36_000_000);
    expect(retryDelayMs(DEFAULT_RETRY_SCHEDULE.length + 1, DEFAULT_RETRY_SCHEDULE, () => 0.5)).toBeNull();
  });

  it('honours retry-after (seconds or a date), never sooner, at most a day', () => {
    const now = new Date('2026-05-01T10:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Fri, 01 May 2026 10:05:00 GMT', now)).toBe(300_000);
    expect(parseRetryAfter('Fri, 01 May 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-1', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(retryDelayMs(1, [5], () => 0.5, 120_000)).toBe(120_000);
    expect(retryDelayMs(1, [500], () => 0.5, 1_000)).toBe(500_000);
    expect(retryDelayMs(1, [5], () => 0.5, 10 * RETRY_AFTER_MAX_MS)).toBe(RETRY_AFTER_MAX_MS);
  });

  it('WEBHOOK_RETRY_SCHEDULE is seconds, comma-separated; anything else stops the start naming it', () => {
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1, 2,3' }).features.webhooks.retryScheduleSeconds).toEqual([
      1, 2, 3,
    ]);
    expect(loadConfig({}).features.webhooks.retryScheduleSeconds).toEqual(DEFAULT_RETRY_SCHEDULE);
    for (const bad of ['1,,2', '0', 'x', '1.5', '604801', Array(31).fill('1').join(',')]) {
      expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: bad })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
    }
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'maybe' })).toThrow(
      /WEBHOOK_ALLOW_PRIVATE_TARGETS/,
    );
    expect(() => loadConfig({ CALENDAR_NAME: 'a\r\nX-EVIL:1' })).toThrow(/CALENDAR_NAME/);
    expect(() => loadConfig({ PUBLIC_URL: 'https://events.example/path' })).toThrow(/PUBLIC_URL/);
    expect(loadConfig({ PUBLIC_URL: 'https://events.example/' }).features.publicUrl).toBe(
      'https://events.example',
    );
  });
});

describe('targets', () => {
  it('refuses loopback, private, link-local, unique-local, mapped and unspecified addresses', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '100.64.0.1',
      '::1',
      'fc00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::',
      '224.0.0.1',
    ]) {
      expect(forbiddenAddress(address), address).toBeDefined();
    }
    for (const address of ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']) {
      expect(forbiddenAddress(address), address).toBeUndefined();
    }
  });

  it('takes absolute http(s) URLs without credentials; private literals only when allowed', () => {
    expect(checkTargetUrl('https://receiver.example/hook', false).ok).toBe(true);
    for (const bad of [
      'ftp://x.example/',
      'https://user:pw@x.example/',
      'http:///a',
      '/relative',
      'https://x.example/a b',
      `https://x.example/${'a'.repeat(2100)}`,
      'http://x.example:0/',
    ]) {
      expect(checkTargetUrl(bad, true).ok, bad.slice(0, 40)).toBe(false);
    }
    for (const inward of [
      'http://127.0.0.1:8080/',
      'http://[::1]/',
      'http://10.0.0.1/',
      'http://localhost:3000/',
      'http://169.254.169.254/latest/meta-data/',
      'http://localhost.:3000/',
      'http://app.localhost./',
    ]) {
      expect(checkTargetUrl(inward, false).ok, inward).toBe(false);
      expect(checkTargetUrl(inward, true).ok, inward).toBe(true);
    }
  });

  it('says which kind of address a refused literal is, in words', () => {
    expect(forbiddenAddress('0.0.0.0')).toBe('0.0.0.0, an unspecified address');
    expect(forbiddenAddress('100.64.0.1')).toBe('100.64.0.1, a carrier-grade NAT address');
    expect(forbiddenAddress('fe80::1')).toBe('fe80::1, a link-local address');
  });
});
