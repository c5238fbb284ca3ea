/**
 * Webhooks with real processes and real faults: two server processes on one PostgreSQL, and a
 * receiver process verifying every request with `standardwebhooks`. The receiver is stopped
 * (SIGSTOP) for a while and then gets every change once (by `webhook-id`, as the standard says
 * receivers dedupe) and in order; the instance sending is SIGKILLed mid-stream and the other one
 * goes on, losing nothing. The default outage is 3 s; `WEBHOOK_OUTAGE_SECONDS=60` runs the minute.
 */
import { resolve } from 'node:path';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/app';
import { useTestDatabase } from '@platform/testkit/fixtures';
import { type ManagedProcess, servicePid, spawnManaged } from '@platform/testkit/process';
import { until } from '@platform/testkit/wait';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { LOCK_APPLICATION_NAME } from '../src/webhooks/locks.js';
import { hmacToken, newId, SECRET, validBody } from './helpers.js';
import type { Received } from './support/webhook-receiver.js';

const root = resolve(import.meta.dirname, '..');
const db = useTestDatabase('events_webhook_proc');
const OUTAGE_SECONDS = Number(process.env.WEBHOOK_OUTAGE_SECONDS ?? 3);
const started: ManagedProcess[] = [];

afterEach(async () => {
  for (const proc of started.splice(0)) await proc.stop(1_000);
});
afterAll(async () => {
  for (const proc of started) await proc.stop(1_000);
});

/** Retries every second at first, then every 2-5 s: through the outage and well past it. */
function schedule(outageSeconds: number): string {
  const steps = ['1', '1', '1', '2', '2'];
  for (let total = 7; total < outageSeconds + 30; total += 5) steps.push('5');
  return steps.join(',');
}

async function server(): Promise<ServiceProcess> {
  const proc = await startServiceProcess({
    name: 'events',
    entry: resolve(root, 'src/server.ts'),
    cwd: root,
    port: 0,
    healthPath: '/health',
    env: {
      DATABASE_URL: db.url,
      JWT_SECRET: SECRET,
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_POLL_MS: '200',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_RETRY_SCHEDULE: schedule(OUTAGE_SECONDS),
      READ_CACHE_MAX_ENTRIES: '1000',
    },
  });
  started.push(proc);
  return proc;
}

interface ReceiverProcess {
  proc: ManagedProcess;
  url: string;
  pid: number;
  received(): Promise<Received[]>;
}

async function receiverProcess(delayMs = 0): Promise<ReceiverProcess> {
  let output = '';
  const proc = spawnManaged({
    name: 'receiver',
    command: process.execPath,
    args: ['--import', 'tsx', resolve(root, 'test/support/webhook-receiver.ts'), '0', String(delayMs)],
    cwd: root,
    onOutput: (text) => {
      output += text;
    },
  });
  started.push(proc);
  const port = await until('the receiver to listen', () => /listening (\d+)/.exec(output)?.[1], 30_000);
  const base = `http://127.0.0.1:${port}`;
  // The node process itself (the managed pid is its watchdog shell): the one to stop.
  const pid = await until('the receiver pid', async () => {
    try {
      return servicePid(proc.pid!);
    } catch {
      return undefined;
    }
  });
  return {
    proc,
    url: `${base}/hook/main`,
    pid,
    async received() {
      return (await (await fetch(`${base}/_control/received/main`)).json()) as Received[];
    },
  };
}

async function subscribe(on: ServiceProcess, receiver: ReceiverProcess, token: string): Promise<string> {
  const answer = await fetch(`${on.url}/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url }),
  });
  expect(answer.status).toBe(201);
  const { id, secret } = (await answer.json()) as { id: string; secret: string };
  await fetch(receiver.url.replace('/hook/main', '/_control/secret/main'), { method: 'POST', body: secret });
  return id;
}

/** Writes through the instances in turn; returns `type eventId` of each change, in order. */
async function writes(
  instances: ServiceProcess[],
  token: string,
  count: number,
  offset = 0,
): Promise<string[]> {
  const changes: string[] = [];
  for (let i = 0; i < count; i++) {
    const on = instances[(i + offset) % instances.length]!;
    const id = newId('pw');
    const answer = await fetch(`${on.url}/events/${id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...validBody, name: `change ${i}` }),
    });
    expect(answer.status).toBe(201);
    changes.push(`event.created ${id}`);
  }
  return changes;
}

/** Each message once (the first arrival of each webhook-id), in arrival order. */
function firstArrivals(received: readonly Received[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const message of received) {
    if (seen.has(message.id)) continue;
    seen.add(message.id);
    out.push(`${message.type} ${String(message.data.eventId)}`);
  }
  return out;
}

describe('webhooks across processes', () => {
  it(
    `a receiver stopped for ${OUTAGE_SECONDS} s then gets every change once, in order`,
    async () => {
      const [a, b] = await Promise.all([server(), server()]);
      const receiver = await receiverProcess();
      const token = await hmacToken(newId('outage'));
      await subscribe(a!, receiver, token);
      const before = await writes([a!, b!], token, 10);
      await until('the first deliveries', async () => (await receiver.received()).length >= 10, 20_000);
      process.kill(receiver.pid, 'SIGSTOP');
      let during: string[];
      try {
        during = await writes([a!, b!], token, 20, 1);
        await new Promise((done) => setTimeout(done, OUTAGE_SECONDS * 1000));
      } finally {
        process.kill(receiver.pid, 'SIGCONT');
      }
      const expected = [...before, ...during];
      const got = await until(
        'every change after the outage',
        async () => {
          const received = await receiver.received();
          return firstArrivals(received).length >= expected.length && received;
        },
        (OUTAGE_SECONDS + 60) * 1000,
        200,
      );
      expect(firstArrivals(got)).toEqual(expected);
    },
    (OUTAGE_SECONDS + 150) * 1000,
  );

  it('a SIGKILL of the sending instance loses nothing: the other one goes on, in order', async () => {
    const [a, b] = await Promise.all([server(), server()]);
    // 20 ms per answer: deliveries are under way when the sender dies.
    const receiver = await receiverProcess(20);
    const token = await hmacToken(newId('kill'));
    const subscription = await subscribe(b!, receiver, token);
    const expected = await writes([a!, b!], token, 60);
    // The sender runs at nice 10 (WEBHOOK_SENDER_NICE): on a loaded CI machine its first deliveries
    // may take a while.
    await until('some deliveries', async () => (await receiver.received()).length >= 10, 60_000);
    // The sender is whoever holds this subscription's advisory lock (polled: between two batches a
    // caught-up sender may let it go for a moment; the first test's instances may still hold theirs).
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    let senderPid: number;
    try {
      senderPid = await until(
        'one instance holding the subscription lock',
        async () => {
          const rows = await admin.query<{ application_name: string }>(
            `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
             WHERE l.locktype = 'advisory' AND l.classid = 3300045 AND l.objid = hashtext($2)::oid
               AND a.application_name LIKE $1`,
            [`${LOCK_APPLICATION_NAME}:%`, subscription],
          );
          return rows.rows.length === 1 ? Number(rows.rows[0]!.application_name.split(':')[1]) : undefined;
        },
        20_000,
        50,
      );
    } finally {
      await admin.end();
    }
    process.kill(senderPid, 'SIGKILL');
    const got = await until(
      'every change after the kill',
      async () => {
        const received = await receiver.received();
        return firstArrivals(received).length >= expected.length && received;
      },
      60_000,
      200,
    );
    expect(firstArrivals(got)).toEqual(expected);
    // The killed one is gone (its watchdog notices within half a second); the other sent the rest.
    await until(
      'the killed instance gone',
      () => [a!, b!].filter((proc) => proc.isRunning()).length === 1,
      10_000,
    );
  }, 150_000);
});
