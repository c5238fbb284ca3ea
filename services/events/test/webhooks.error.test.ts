/**
 * Webhook deliveries that fail, on real PostgreSQL with retry schedules of seconds
 * (`WEBHOOK_RETRY_SCHEDULE`): the same `webhook-id` on every retry while later messages wait (order
 * kept), `retry-after` honoured, 410 disables, redirects not followed, the timeout, the schedule
 * used up, private targets refused at send time (a literal address and a name resolving to
 * loopback), and test messages with their bound.
 */
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { until } from '@platform/testkit/wait';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, hmacToken, newId, type TestApp, validBody } from './helpers.js';
import { webhookApps } from './support/webhook-apps.js';
import { type Receiver, startReceiver } from './support/webhook-receiver.js';

const db = useTestDatabase('events_webhook_faults');
let app: TestApp;
let receiver: Receiver;
let token: string;

const SETTINGS = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_RETRY_SCHEDULE: '1,1,1',
  WEBHOOK_TIMEOUT_MS: '500',
};

const { appOn, closeAll } = webhookApps(() => db.url, SETTINGS);

beforeAll(async () => {
  receiver = await startReceiver();
  app = await appOn();
});
afterAll(async () => {
  await closeAll();
  await receiver?.close();
});

/** A subscription of a fresh user to `receiver.url(name)` (or `url`), on `on`. */
async function subscribe(name: string, on: TestApp = app, url = receiver.url(name)) {
  token = await hmacToken(newId('user'));
  const answer = await call(on, '/webhooks', { method: 'POST', token, body: { url } });
  expect(answer.status, answer.text).toBe(201);
  const sub = answer.json as { id: string; secret: string };
  receiver.setSecret(name, sub.secret);
  return { ...sub, token };
}

async function write(who: string, on: TestApp = app): Promise<string> {
  const id = newId('f');
  expect((await call(on, `/events/${id}`, { method: 'PUT', token: who, body: validBody })).status).toBe(201);
  return id;
}

const subscription = async (id: string, who: string) =>
  (await call(app, `/webhooks/${id}`, { token: who })).json as {
    status: string;
    disabled_reason: string | null;
  };

describe('failed deliveries', () => {
  it('are retried with the same webhook-id while later messages wait, and then all arrive in order', async () => {
    const sub = await subscribe('retry');
    receiver.answers('retry', { status: 500 }, { status: 502 });
    const first = await write(sub.token);
    const second = await write(sub.token);
    await until('the first failed attempt', () => receiver.received('retry').length >= 1, 10_000);
    // While the first message fails, the deliveries list shows it pending with its attempts and
    // the second waiting behind it.
    const pending = await until(
      'the first attempt recorded',
      async () => {
        const list = (await call(app, `/webhooks/${sub.id}/deliveries`, { token: sub.token })).json as Record<
          string,
          unknown
        >[];
        return list.length === 2 && list[1]?.attempts === 1 && list;
      },
      10_000,
    );
    expect(pending[1]).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_response_status: 500,
      last_error: 'HTTP 500',
    });
    expect(Date.parse(String(pending[1]?.next_attempt_at))).toBeGreaterThan(Date.now() - 1_000);
    expect(pending[0]).toMatchObject({ status: 'pending', attempts: 0 });
    await until('both delivered', () => receiver.received('retry').length === 4, 15_000);
    const got = receiver.received('retry');
    expect(got.map((m) => String(m.data.eventId))).toEqual([first, first, first, second]);
    expect(new Set(got.slice(0, 3).map((m) => m.id)).size).toBe(1);
    // Backoff: about a second (±20%) between attempts.
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(750);
    expect(got[2]!.at - got[1]!.at).toBeGreaterThanOrEqual(750);
    // Committed right after the receiver answered.
    const list = await until(
      'both committed',
      async () => {
        const found = (await call(app, `/webhooks/${sub.id}/deliveries`, { token: sub.token }))
          .json as Record<string, unknown>[];
        return found.every((d) => d.status === 'delivered') && found;
      },
      5_000,
    );
    expect(list.map((d) => [d.status, d.attempts])).toEqual([
      ['delivered', 1],
      ['delivered', 3],
    ]);
  });

  it('honour retry-after', async () => {
    const sub = await subscribe('later');
    receiver.answers('later', { status: 503, headers: { 'retry-after': '3' } });
    await write(sub.token);
    await until('two attempts', () => receiver.received('later').length === 2, 15_000);
    const [one, two] = receiver.received('later');
    expect(two!.at - one!.at).toBeGreaterThanOrEqual(2_900);
  });

  it('stop at 410: the subscription is disabled and nothing more is sent', async () => {
    const sub = await subscribe('gone');
    receiver.answers('gone', { status: 410 });
    await write(sub.token);
    await until(
      'disabled',
      async () => (await subscription(sub.id, sub.token)).status === 'disabled',
      10_000,
    );
    expect((await subscription(sub.id, sub.token)).disabled_reason).toContain('410');
    await write(sub.token);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.received('gone')).toHaveLength(1);
    const list = (await call(app, `/webhooks/${sub.id}/deliveries`, { token: sub.token })).json as Record<
      string,
      unknown
    >[];
    expect(list).toEqual([
      expect.objectContaining({ status: 'failed', attempts: 1, last_response_status: 410 }),
    ]);
    // A disabled subscription takes no test message.
    expect((await call(app, `/webhooks/${sub.id}/test`, { method: 'POST', token: sub.token })).status).toBe(
      409,
    );
  });

  it('never follow a redirect (a failed attempt), and time out a receiver that does not answer', async () => {
    const moved = await subscribe('moved');
    receiver.answers('moved', {
      status: 307,
      headers: { location: receiver.url('elsewhere').replace('/hook/', '/moved-to/') },
    });
    await write(moved.token);
    await until('the retry after the redirect', () => receiver.received('moved').length === 2, 15_000);
    expect(receiver.strays).toEqual([]);

    const silent = await subscribe('silent');
    receiver.answers('silent', { status: 0, hang: true });
    await write(silent.token);
    await until('the retry after the timeout', () => receiver.received('silent').length === 2, 15_000);
    // The second attempt has arrived; its answer is recorded a moment later (polled: a loaded CI
    // machine read the deliveries before that).
    const first = await until(
      'the delivery recorded',
      async () => {
        const list = (await call(app, `/webhooks/${silent.id}/deliveries`, { token: silent.token }))
          .json as Record<string, unknown>[];
        return list[0]?.['status'] === 'delivered' ? list[0] : undefined;
      },
      15_000,
    );
    expect(first).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('give up after the whole schedule: the message failed, the subscription disabled', async () => {
    // Only an instance with a one-step schedule sends (instances should share one schedule).
    await app.close();
    const short = await appOn({ WEBHOOK_RETRY_SCHEDULE: '1' });
    try {
      const sub = await subscribe('hopeless', short);
      receiver.answers('hopeless', { status: 500 }, { status: 500 }, { status: 500 });
      await write(sub.token, short);
      const state = async () =>
        (await call(short, `/webhooks/${sub.id}`, { token: sub.token })).json as {
          status: string;
          disabled_reason: string;
        };
      await until('disabled', async () => (await state()).status === 'disabled', 15_000);
      expect(receiver.received('hopeless')).toHaveLength(2);
      expect((await state()).disabled_reason).toContain('2 attempts');
      const list = (await call(short, `/webhooks/${sub.id}/deliveries`, { token: sub.token })).json as Record<
        string,
        unknown
      >[];
      expect(list).toEqual([
        expect.objectContaining({ status: 'failed', attempts: 2, last_response_status: 500 }),
      ]);
    } finally {
      await short.close();
      app = await appOn();
    }
  });
});

describe('private targets', () => {
  it('are refused when subscribing with a literal address, unless WEBHOOK_ALLOW_PRIVATE_TARGETS=true', async () => {
    const strict = await appOn({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_DISPATCH: 'false' });
    const who = await hmacToken(newId('ssrf'));
    for (const url of [
      receiver.url('x'),
      'http://[::1]/x',
      'http://localhost/x',
      'http://169.254.169.254/latest',
    ]) {
      const answer = await call(strict, '/webhooks', { method: 'POST', token: who, body: { url } });
      expect(answer.status, url).toBe(400);
      expect(JSON.stringify(answer.json)).toContain('private address');
    }
    expect((await call(strict, '/webhooks', { token: who })).json).toEqual([]);
    await strict.close();
  });

  it('are refused at send time, on the address a name resolves to', async () => {
    // A name of this machine that resolves to loopback (Debian maps the host name in /etc/hosts).
    const name = hostname();
    expect((await lookup(name)).address).toMatch(/^127\./);
    // Subscriptions made on an instance that allows private targets, sent by one that does not.
    const loose = await appOn({ WEBHOOK_DISPATCH: 'false' });
    const literal = await subscribe('literal', loose);
    const byName = await subscribe('named', loose, receiver.url('named').replace('127.0.0.1', name));
    await loose.close();
    await app.close();
    const strict = await appOn({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    try {
      await write(literal.token, strict);
      await write(byName.token, strict);
      for (const sub of [literal, byName]) {
        const head = await until(
          'a refused attempt',
          async () => {
            const list = (await call(strict, `/webhooks/${sub.id}/deliveries`, { token: sub.token }))
              .json as Record<string, unknown>[];
            // The oldest pending message (other users' PUBLIC events reach this subscription too).
            const head = list.at(-1);
            return head?.attempts === 1 && head;
          },
          10_000,
        );
        expect(String(head.last_error)).toMatch(/^refused target: .*loopback/);
        expect(head.last_response_status).toBeNull();
      }
      expect(receiver.received('literal')).toEqual([]);
      expect(receiver.received('named')).toEqual([]);
    } finally {
      await strict.close();
      app = await appOn();
    }
  });
});

describe('test messages', () => {
  it('arrive as webhook.test in order with the others; at most 5 may wait', async () => {
    const sub = await subscribe('tests');
    const before = await write(sub.token);
    const queued = await call(app, `/webhooks/${sub.id}/test`, { method: 'POST', token: sub.token });
    expect(queued.status).toBe(202);
    const { webhook_id } = queued.json as { webhook_id: string };
    const after = await write(sub.token);
    await until('three messages', () => receiver.received('tests').length === 3, 10_000);
    const got = receiver.received('tests');
    expect(got.map((m) => m.type)).toEqual(['event.created', 'webhook.test', 'event.created']);
    expect(got[1]).toMatchObject({ id: webhook_id, data: { subscription_id: sub.id } });
    expect([got[0]!.data.eventId, got[2]!.data.eventId]).toEqual([before, after]);

    // With no sender running, test messages wait: the sixth is refused.
    await app.close();
    const idle = await appOn({ WEBHOOK_DISPATCH: 'false' });
    try {
      const waiting = await subscribe('waiting', idle);
      for (let i = 0; i < 5; i++) {
        expect(
          (await call(idle, `/webhooks/${waiting.id}/test`, { method: 'POST', token: waiting.token })).status,
        ).toBe(202);
      }
      const sixth = await call(idle, `/webhooks/${waiting.id}/test`, {
        method: 'POST',
        token: waiting.token,
      });
      expect(sixth.status).toBe(409);
      expect(sixth.json).toMatchObject({ statusCode: 409, error: 'Conflict' });
    } finally {
      app = await appOn();
    }
    await until('the five test messages', () => receiver.received('waiting').length === 5, 10_000);
  });
});
