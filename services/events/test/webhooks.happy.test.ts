/**
 * Webhooks on real PostgreSQL with two instances sending (advisory locks), to a receiver that
 * verifies every request with `standardwebhooks`' verify(): each subscription gets what its owner
 * may see, in change order, each message once; a tampered one is refused; rotation signs with
 * both secrets during the grace; test messages; the deliveries list.
 */
import { randomBytes } from 'node:crypto';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { until } from '@platform/testkit/wait';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, hmacToken, newId, type TestApp, validBody } from './helpers.js';
import { webhookApps } from './support/webhook-apps.js';
import { type Received, type Receiver, startReceiver } from './support/webhook-receiver.js';

const db = useTestDatabase('events_webhooks');
let a: TestApp;
let b: TestApp;
let receiver: Receiver;
const tokens: Record<string, string> = {};

const SETTINGS = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_RETRY_SCHEDULE: '1,1,1',
};

const { appOn, closeAll } = webhookApps(() => db.url, SETTINGS);

beforeAll(async () => {
  receiver = await startReceiver();
  a = await appOn();
  b = await appOn();
  for (const name of ['alice', 'bob', 'erin', 'frank']) tokens[name] = await hmacToken(name);
  tokens.carol = await hmacToken('carol', { member: true });
});
afterAll(async () => {
  await closeAll();
  await receiver?.close();
});

async function subscribe(app: TestApp, who: string, name: string, types?: string[]) {
  const answer = await call(app, '/webhooks', {
    method: 'POST',
    token: tokens[who],
    body: { url: receiver.url(name), ...(types ? { types } : {}) },
  });
  expect(answer.status, answer.text).toBe(201);
  const sub = answer.json as { id: string; secret: string; status: string; types: string[] };
  receiver.setSecret(name, sub.secret);
  return sub;
}

async function put(
  app: TestApp,
  who: string,
  id: string,
  fields: Record<string, unknown> = {},
): Promise<void> {
  const answer = await call(app, `/events/${id}`, {
    method: 'PUT',
    token: tokens[who],
    body: { ...validBody, ...fields },
  });
  expect(answer.status, answer.text).toBeLessThan(300);
}

const summary = (list: Received[]) => list.map((m) => `${m.type} ${String(m.data.eventId ?? '')}`);

describe('webhooks across two instances', () => {
  it('deliver what each owner may see, in change order, once each, verified by standardwebhooks', async () => {
    const all = await subscribe(a, 'alice', 'alice');
    expect(all.secret).toMatch(/^whsec_/);
    expect(all.types).toEqual(['event.created', 'event.updated', 'event.deleted']);
    await subscribe(b, 'bob', 'bob-deletes', ['event.deleted']);
    await subscribe(a, 'bob', 'bob');
    await subscribe(b, 'carol', 'carol');
    // The secret is shown once: not in the list, not in one subscription's answer.
    const listed = await call(b, '/webhooks', { token: tokens.alice });
    expect(listed.text).not.toContain(all.secret);
    expect((listed.json as { id: string }[]).map((s) => s.id)).toEqual([all.id]);
    expect((await call(a, `/webhooks/${all.id}`, { token: tokens.alice })).text).not.toContain('whsec_');

    const [e1, e2, e3] = [newId('w1'), newId('w2'), newId('w3')];
    await put(a, 'alice', e1, { name: 'one' });
    await put(b, 'alice', e2, { name: 'two', access: 'PRIVATE' });
    await put(a, 'alice', e1, { name: 'one, changed' });
    await put(b, 'alice', e1, { name: 'one, changed', access: 'PRIVATE' });
    expect((await call(a, `/events/${e2}`, { method: 'DELETE', token: tokens.alice })).status).toBe(204);
    await put(b, 'bob', e3, { name: 'three' });

    // A creator and a member see every change of these events.
    const everything = [
      `event.created ${e1}`,
      `event.created ${e2}`,
      `event.updated ${e1}`,
      `event.updated ${e1}`,
      `event.deleted ${e2}`,
      `event.created ${e3}`,
    ];
    const expected: Record<string, string[]> = {
      alice: everything,
      carol: everything,
      // Bob never sees alice's PRIVATE e2; e1 made PRIVATE is a deletion to him.
      bob: [`event.created ${e1}`, `event.updated ${e1}`, `event.deleted ${e1}`, `event.created ${e3}`],
      'bob-deletes': [`event.deleted ${e1}`],
    };
    for (const [name, messages] of Object.entries(expected)) {
      await until(
        `${name} to receive ${messages.length}`,
        () => receiver.received(name).length >= messages.length,
        15_000,
      );
    }
    // Quiet for a moment: nothing more (no duplicate from the other instance).
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const [name, messages] of Object.entries(expected)) {
      const got = receiver.received(name);
      expect(summary(got), name).toEqual(messages);
      expect(new Set(got.map((m) => m.id)).size, name).toBe(got.length);
    }
    expect(receiver.refused).toBe(0);
    // The payload is the event as GET answered it then; a hidden one carries only its id.
    const created = receiver.received('alice')[0]!;
    expect(created.data).toMatchObject({ eventId: e1, name: 'one', access: 'PUBLIC', createdBy: 'alice' });
    expect(Object.keys(created.data).sort()).toEqual(
      Object.keys((await call(a, `/events/${e3}`)).json as object).sort(),
    );
    expect(receiver.received('bob')[2]!.data).toEqual({ eventId: e1 });
    // Every message once in the deliveries list, newest first, delivered on the first attempt.
    const deliveries = (await call(a, `/webhooks/${all.id}/deliveries`, { token: tokens.alice }))
      .json as Record<string, unknown>[];
    expect(deliveries.map((d) => d.webhook_id)).toEqual(
      receiver
        .received('alice')
        .map((m) => m.id)
        .reverse(),
    );
    for (const delivery of deliveries) {
      expect(delivery).toMatchObject({
        attempts: 1,
        status: 'delivered',
        last_response_status: 200,
        next_attempt_at: null,
      });
    }
  });

  it('a receiver refuses a tampered delivery', async () => {
    const sub = await subscribe(a, 'erin', 'tamper');
    await put(b, 'erin', newId('t1'));
    await until('a delivery', () => receiver.received('tamper').length === 1, 15_000);
    const original = receiver.received('tamper')[0]!;
    const headers = {
      'content-type': 'application/json',
      'webhook-id': original.id,
      'webhook-timestamp': String(original.timestamp),
      'webhook-signature': original.signatures.join(' '),
    };
    const body = JSON.stringify({
      type: original.type,
      timestamp: 'x',
      data: { ...original.data, name: 'forged' },
    });
    const forged = await fetch(receiver.url('tamper'), { method: 'POST', headers, body });
    expect(forged.status).toBe(400);
    const otherSecret = await fetch(receiver.url('tamper'), {
      method: 'POST',
      headers: { ...headers, 'webhook-signature': `v1,${randomBytes(32).toString('base64')}` },
      body,
    });
    expect(otherSecret.status).toBe(400);
    expect(receiver.refused).toBe(2);
    expect(receiver.received('tamper')).toHaveLength(1);
    expect(sub.status).toBe('active');
  });

  it('rotation: a new secret shown once, both secrets sign during the grace, then the new one alone', async () => {
    const graceApp = await appOn({ WEBHOOK_ROTATION_GRACE_SECONDS: '2' });
    const sub = await subscribe(graceApp, 'frank', 'rotate');
    const oldSecret = sub.secret;
    const rotated = await call(b, `/webhooks/${sub.id}/rotate-secret`, {
      method: 'POST',
      token: tokens.frank,
    });
    expect(rotated.status).toBe(200);
    const fresh = (rotated.json as { secret: string; previous_secret_expires_at: string | null }).secret;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(oldSecret);
    // b's grace is the default 24 h.
    expect(
      Date.parse(
        String((rotated.json as { previous_secret_expires_at: string }).previous_secret_expires_at),
      ) - Date.now(),
    ).toBeGreaterThan(23 * 3600_000);
    // Rotate again on the app with a 2 s grace: the receiver still knows only the last-but-one secret.
    const again = await call(graceApp, `/webhooks/${sub.id}/rotate-secret`, {
      method: 'POST',
      token: tokens.frank,
    });
    const newest = (again.json as { secret: string }).secret;
    receiver.setSecret('rotate', fresh);
    await put(graceApp, 'frank', newId('r1'));
    await until('a delivery signed with both', () => receiver.received('rotate').length === 1, 15_000);
    const signed = receiver.received('rotate')[0]!;
    expect(signed.signatures).toHaveLength(2);
    // The receiver verified it with `fresh` (the previous secret); it verifies with `newest` too, not
    // with the secret of two rotations ago.
    expect(new Webhook(newest).verify(signed.raw, signed.headers)).toMatchObject({ type: 'event.created' });
    expect(() => new Webhook(oldSecret).verify(signed.raw, signed.headers)).toThrow();
    // After the grace only the newest signs: a receiver on the old secret refuses, on the new accepts.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    await put(graceApp, 'frank', newId('r2'));
    await until('the refused delivery', () => receiver.refused >= 1, 15_000);
    receiver.setSecret('rotate', newest);
    await until(
      'the delivery verified with the newest secret',
      () => receiver.received('rotate').length === 2,
      15_000,
    );
    expect(receiver.received('rotate')[1]!.signatures).toHaveLength(1);
    expect((await call(a, '/webhooks', { token: tokens.frank })).text).not.toContain(newest);
  });
});
