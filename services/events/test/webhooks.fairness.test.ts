/**
 * A subscription with a long backlog and one waiting for a slot (PostgreSQL, one instance, one
 * slot, a receiver taking 10 ms per message): the backlogged sender lets its slot go after a commit
 * when another subscription is due, so the waiting one is served before the backlog is worked off.
 * Before, only a caught-up sender let go: the second subscription waited for the whole backlog.
 */
import { useTestDatabase } from '@platform/testkit/fixtures';
import { until } from '@platform/testkit/wait';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, hmacToken, newId, validBody } from './helpers.js';
import { webhookApps } from './support/webhook-apps.js';
import { type Receiver, startReceiver } from './support/webhook-receiver.js';

const BACKLOG = 400;
const db = useTestDatabase('events_webhook_fairness');
let receiver: Receiver;
const { appOn, closeAll } = webhookApps(() => db.url, {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_CONCURRENCY: '1',
});

beforeAll(async () => {
  receiver = await startReceiver(0, 10);
});
afterAll(async () => {
  await closeAll();
  await receiver?.close();
});

it('a backlogged sender lets a waiting subscription through, then works its backlog off in order', async () => {
  const app = await appOn();
  const token = await hmacToken('fair');
  const subscribe = async (name: string): Promise<void> => {
    const made = await call(app, '/webhooks', { method: 'POST', token, body: { url: receiver.url(name) } });
    expect(made.status, made.text).toBe(201);
    receiver.setSecret(name, (made.json as { secret: string }).secret);
  };
  const put = async (id: string): Promise<void> => {
    const answer = await call(app, `/events/${id}`, { method: 'PUT', token, body: validBody });
    expect(answer.status, answer.text).toBe(201);
  };

  await subscribe('long');
  const ids = Array.from({ length: BACKLOG }, () => newId('fb'));
  // Eight writers at once: the writes outrun a receiver at 10 ms a message, so a backlog builds.
  for (let at = 0; at < ids.length; at += 8) await Promise.all(ids.slice(at, at + 8).map(put));
  const behindAtWrite = BACKLOG - receiver.received('long').length;
  expect(behindAtWrite, 'the backlog the test needs did not build').toBeGreaterThan(150);

  await subscribe('waiting');
  const last = newId('fw');
  await put(last);
  await until('the waiting subscription served', () => receiver.received('waiting').length === 1, 15_000);
  const longAtThatTime = receiver.received('long').length;
  expect(receiver.received('waiting')[0]!.data.eventId).toBe(last);
  // Served while the backlog was still being worked off (the long one had not reached `last`).
  expect(longAtThatTime).toBeLessThan(BACKLOG);

  await until('the backlog worked off', () => receiver.received('long').length >= BACKLOG + 1, 30_000);
  // Each once, `last` last (the eight writers commit in their own order, so the log's order of the
  // backlog is not the ids' order): letting the slot go and taking it back lost or repeated nothing.
  const got = receiver.received('long').map((m) => String(m.data.eventId));
  expect(got.at(-1)).toBe(last);
  expect([...got].sort()).toEqual([...ids, last].sort());
});
