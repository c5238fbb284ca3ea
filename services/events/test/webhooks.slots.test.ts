/**
 * More subscriptions than WEBHOOK_CONCURRENCY (PostgreSQL, one instance, one slot): polls (100 ms)
 * wake a caught-up sender more often than it lingers (2 s), so before the fix it kept its slot for
 * ever and the second subscription was never sent (bench:webhooks' drain of 10 subscriptions at
 * 8 at once stopped at 8).
 */
import { useTestDatabase } from '@platform/testkit/fixtures';
import { until } from '@platform/testkit/wait';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, hmacToken, newId, validBody } from './helpers.js';
import { webhookApps } from './support/webhook-apps.js';
import { type Receiver, startReceiver } from './support/webhook-receiver.js';

const db = useTestDatabase('events_webhook_slots');
let receiver: Receiver;
const { appOn, closeAll } = webhookApps(() => db.url, {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_CONCURRENCY: '1',
});

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await closeAll();
  await receiver?.close();
});

it('a caught-up sender gives its slot up to a subscription waiting for one', async () => {
  const app = await appOn();
  const token = await hmacToken('hugo');
  const names = ['slot-a', 'slot-b', 'slot-c'];
  const ids: string[] = [];
  for (const name of names) {
    const made = await call(app, '/webhooks', { method: 'POST', token, body: { url: receiver.url(name) } });
    expect(made.status, made.text).toBe(201);
    receiver.setSecret(name, (made.json as { secret: string }).secret);
    // Each subscription after the first has a message the ones before it were sent first.
    const id = newId('sl');
    ids.push(id);
    expect((await call(app, `/events/${id}`, { method: 'PUT', token, body: validBody })).status).toBe(201);
    await until(`${name} served`, () => receiver.received(name).length === 1, 10_000);
  }
  expect(names.map((name) => receiver.received(name).map((m) => m.data.eventId))).toEqual([
    ids,
    ids.slice(1),
    ids.slice(2),
  ]);
});
