/**
 * Webhooks on PGlite alone (locks in memory): a backlog written while no sender ran, past the
 * tenth change (change numbers compared as numbers, not as text: 10 after 9), listed pending
 * newest first, then sent in change order once a sender starts, then listed delivered.
 */
import { until } from '@platform/testkit/wait';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { OpenedStorage } from '../src/storage/open-store.js';
import {
  call,
  featureSettings,
  hmacToken,
  newId,
  openPgliteStorage,
  startApp,
  type TestApp,
  validBody,
} from './helpers.js';
import { type Receiver, startReceiver } from './support/webhook-receiver.js';

let storage: OpenedStorage;
let receiver: Receiver;
const apps: TestApp[] = [];

const appOn = async (env: Record<string, string>) => {
  const app = await startApp({
    store: storage.store,
    features: {
      sql: storage.sql,
      settings: featureSettings({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_MS: '100', ...env }),
    },
  });
  apps.push(app);
  return app;
};

beforeAll(async () => {
  storage = await openPgliteStorage();
  receiver = await startReceiver();
});
afterAll(async () => {
  for (const app of apps) await app.close();
  await storage?.store.close();
  await receiver?.close();
});

it('sends a backlog of 15 messages in change order, listed newest first before and after', async () => {
  const idle = await appOn({ WEBHOOK_DISPATCH: 'false' });
  const token = await hmacToken('gina');
  const made = await call(idle, '/webhooks', {
    method: 'POST',
    token,
    body: { url: receiver.url('backlog') },
  });
  const sub = made.json as { id: string; secret: string };
  receiver.setSecret('backlog', sub.secret);
  const ids: string[] = [];
  for (let i = 0; i < 15; i++) {
    const id = newId('bl');
    ids.push(id);
    expect((await call(idle, `/events/${id}`, { method: 'PUT', token, body: validBody })).status).toBe(201);
  }
  const pending = (await call(idle, `/webhooks/${sub.id}/deliveries?limit=100`, { token })).json as Record<
    string,
    unknown
  >[];
  expect(pending).toHaveLength(15);
  expect(pending.every((d) => d.status === 'pending' && d.type === 'event.created')).toBe(true);
  expect(receiver.received('backlog')).toEqual([]);

  await idle.close();
  const sender = await appOn({});
  await until('the backlog', () => receiver.received('backlog').length === 15, 15_000);
  expect(receiver.received('backlog').map((m) => m.data.eventId)).toEqual(ids);
  const delivered = await until(
    'all committed',
    async () => {
      const list = (await call(sender, `/webhooks/${sub.id}/deliveries?limit=100`, { token })).json as Record<
        string,
        unknown
      >[];
      return list.every((d) => d.status === 'delivered') && list;
    },
    5_000,
  );
  expect(delivered.map((d) => d.webhook_id)).toEqual(pending.map((d) => d.webhook_id));
  expect(delivered.map((d) => d.webhook_id)).toEqual(
    receiver
      .received('backlog')
      .map((m) => m.id)
      .reverse(),
  );
});
