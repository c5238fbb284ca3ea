import { createServer, type Server } from 'node:http';
import { seedName, testSeeds } from '@platform/testkit/seeds';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPaygate } from '../../src/fiat/signature.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { balancesOf } from '../../src/ledger/store.js';
import { accountWithKey, credit } from '../support/accounts.js';
import { client } from '../support/client.js';
import { formFields, postJson, submitForm } from './gateway-client.js';
import { eventually, useFiatPlatform } from './platform.js';

/**
 * The exchange's real receiver under the gateway's fault-injecting sandbox (services/paygate README,
 * "Callback faults"): callbacks duplicated (alongside and after), delayed, held back for later objects,
 * dropped and redelivered, and some signed with the secret before a rotation. A recording relay between
 * the gateway and the exchange sees what the receiver was sent. Every deposit must be credited once,
 * every payout settled once, and reconcile clean.
 */
const [SEED = 20261128] = testSeeds([20261128]);
const OLD_SECRET = 'sandbox-exchange-secret';
const NEW_SECRET = 'whsec_rotated_in_the_sandbox_test_0001';
const UAH = 1_000_000n; // ledger minor units per hryvnia

interface Seen {
  readonly eventId: string;
  readonly object: string;
  readonly id: string;
  readonly sequence: number;
  readonly secret: 'new' | 'old' | 'neither';
  readonly status: number;
}

const seen: Seen[] = [];
let relay: Server | undefined;

const platform = useFiatPlatform({
  // The exchange as it runs during the gateway's rotation grace: the new secret, and the old one too.
  paygate: { merchantSecret: NEW_SECRET, previousMerchantSecret: OLD_SECRET },
  gatewayEnv: async (exchangeUrl) => {
    relay = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        const raw = Buffer.concat(chunks);
        const timestamp = String(request.headers['x-paygate-timestamp']);
        const signature = request.headers['x-paygate-signature'];
        const secret =
          signature === signPaygate(NEW_SECRET, timestamp, raw)
            ? 'new'
            : signature === signPaygate(OLD_SECRET, timestamp, raw)
              ? 'old'
              : 'neither';
        const answer = await fetch(`${exchangeUrl}${request.url}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-paygate-merchant': String(request.headers['x-paygate-merchant']),
            'x-paygate-timestamp': timestamp,
            'x-paygate-signature': String(signature),
          },
          body: raw,
        });
        const text = await answer.text();
        const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
        seen.push({
          eventId: String(body.event_id),
          object: String(body.object),
          id: String(body.id),
          sequence: Number(body.sequence),
          secret,
          status: answer.status,
        });
        response.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
      });
    });
    await new Promise<void>((resolve) => relay!.listen(0, '127.0.0.1', resolve));
    const { port } = relay.address() as { port: number };
    return {
      PAYGATE_MERCHANT_CALLBACK_URL_EXCHANGE: `http://127.0.0.1:${port}/v3/paygate/callback`,
      PAYGATE_MERCHANT_CALLBACK_FAULTS_EXCHANGE: `on,seed=${SEED}`,
    };
  },
  // One card per invoice: a declined card fails its invoice (and calls back) at once, instead of
  // leaving it open for another card.
  cardAttemptsMax: 1,
});

async function gatewayQuery<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const db = new pg.Client({ connectionString: platform.gatewayDatabaseUrl });
  await db.connect();
  try {
    return (await db.query<T>(text, values)).rows;
  } finally {
    await db.end();
  }
}

beforeAll(async () => {
  // The rotation `npm run admin -w services/paygate -- secrets rotate exchange --secret ...` would
  // store (services/paygate src/secrets/book.ts): the new secret signs, the old one is in its grace.
  await gatewayQuery(
    `INSERT INTO merchant_secrets (merchant_id, secret, previous_secret, previous_until, rotated_at)
     VALUES ('exchange', $1, $2, now() + interval '1 hour', now())`,
    [NEW_SECRET, OLD_SECRET],
  );
});

afterAll(async () => {
  await new Promise((resolve) => relay?.close(resolve));
});

async function uah(accountId: number) {
  const balance = (await balancesOf(platform.db, accountId)).find((b) => b.currency === 'uah');
  return { available: balance?.available ?? 0n, locked: balance?.locked ?? 0n };
}

/** A fiat deposit paid on the hosted page with `card`; answers the account and the deposit id. */
async function deposit(amount: number, card: string) {
  const user = await accountWithKey(platform.db, ['read']);
  const api = client(() => platform.exchange, user.apiKey, user.secret);
  const created = (await api.v3('/v3/auth/deposit', { currency: 'uah', amount })).json();
  const invoice = await postJson(`${platform.gatewayUrl}/public-api/payment-invoices`, {
    public_key: 'pk_test_exchange_uah',
    reference_id: String(created.deposit_id),
    service: created.provider,
    currency: 'uah',
    amount,
    expires: created.expires,
    signature: created.signature,
  });
  expect(invoice.status, JSON.stringify(invoice.json)).toBe(201);
  const { action, payload } = invoice.json.data.active_payment;
  const page = await submitForm(
    platform.gatewayUrl,
    action,
    Object.fromEntries(payload.map((p: { name: string; value: string }) => [p.name, p.value])),
  );
  const form = formFields(page.html, '/pay');
  await submitForm(platform.gatewayUrl, form.action, {
    ...form.fields,
    card_number: card,
    expiry: '12/39',
    cvc: '123',
  });
  return {
    accountId: user.account.id,
    depositId: Number(created.deposit_id),
    amount,
    paid: card === '4242424242424242',
  };
}

/** A fiat withdrawal of `amount` UAH from an account holding 1000 UAH, to `card`. */
async function payout(amount: number, card: string) {
  const user = await accountWithKey(platform.db, ['read', 'withdraw']);
  await credit(platform.db, user.account.id, 'uah', 1000n * UAH);
  const api = client(() => platform.exchange, user.apiKey, user.secret);
  const response = await api.v3('/v3/auth/withdraw', {
    withdraw_type: 'uah',
    amount,
    gateway: 'payment_card_uah',
    fields: { card_number: card },
  });
  expect(response.statusCode, response.body).toBe(200);
  const [result] = response.json();
  return {
    accountId: user.account.id,
    withdrawalId: Number(result.withdrawal_id),
    amount,
    paid: card === '4242424242424242',
  };
}

describe(`the exchange's receiver under the gateway's callback faults (${seedName(SEED)})`, () => {
  it('credits every deposit once, settles every payout once, and reconciles', async () => {
    const deposits = await Promise.all([
      ...[100, 150, 200, 250, 300, 350].map((amount) => deposit(amount, '4242424242424242')),
      ...[120, 130].map((amount) => deposit(amount, '4000000000000002')),
    ]);
    const payouts = await Promise.all([
      ...[100, 110, 120, 130].map((amount) => payout(amount, '4242424242424242')),
      payout(140, '4000000000000119'),
    ]);

    // Every deposit and withdrawal ended, and everything the gateway wrote was acknowledged (nothing
    // left, nothing dead-lettered).
    const ended = async () => {
      const { rows } = await platform.db.query<{ n: number }>(
        `SELECT (SELECT count(*) FROM deposits WHERE id = ANY($1::int[]) AND status = 'pending')
              + (SELECT count(*) FROM withdrawals WHERE id = ANY($2::int[]) AND status NOT IN ('done', 'failed'))
              AS n`,
        [deposits.map((d) => d.depositId), payouts.map((p) => p.withdrawalId)],
      );
      return Number(rows[0]?.n) === 0 && (await platform.undeliveredCallbacks()) === 0 ? true : undefined;
    };
    await eventually(ended, 30_000);

    for (const d of deposits) {
      const { rows } = await platform.db.query<{ status: string }>(
        'SELECT status FROM deposits WHERE id = $1',
        [d.depositId],
      );
      expect(rows[0]?.status, `deposit ${d.depositId}`).toBe(d.paid ? 'credited' : 'canceled');
      expect(await uah(d.accountId)).toEqual({ available: d.paid ? BigInt(d.amount) * UAH : 0n, locked: 0n });
    }
    for (const p of payouts) {
      const { rows } = await platform.db.query<{ status: string }>(
        'SELECT status FROM withdrawals WHERE id = $1',
        [p.withdrawalId],
      );
      expect(rows[0]?.status, `withdrawal ${p.withdrawalId}`).toBe(p.paid ? 'done' : 'failed');
      // 1.5 % fee on UAH card payouts; a failed payout gives everything back.
      const debited = p.paid ? (BigInt(p.amount) * UAH * 1015n) / 1000n : 0n;
      expect(await uah(p.accountId)).toEqual({ available: 1000n * UAH - debited, locked: 0n });
    }
    expect((await reconcile(platform.db)).ok).toBe(true);

    // The receiver was really put to the test: it answered 2xx to everything it was sent, including
    // duplicates and callbacks signed with the secret before the rotation.
    expect(seen.filter((s) => s.status < 200 || s.status >= 300)).toEqual([]);
    expect(seen.filter((s) => s.secret === 'neither')).toEqual([]);
    expect(seen.filter((s) => s.secret === 'old').length).toBeGreaterThan(0);
    const perEvent = new Map<string, number>();
    for (const s of seen) perEvent.set(s.eventId, (perEvent.get(s.eventId) ?? 0) + 1);
    expect([...perEvent.values()].some((n) => n > 1)).toBe(true);
    // Per object, the first arrivals are in sequence order (1, 2, ...), with nothing missing.
    const byObject = new Map<string, number[]>();
    for (const s of seen) {
      const key = `${s.object}/${s.id}`;
      const list = byObject.get(key) ?? [];
      if (!list.includes(s.sequence)) list.push(s.sequence);
      byObject.set(key, list);
    }
    for (const [key, sequences] of byObject) {
      expect(sequences, key).toEqual(sequences.map((_, i) => i + 1));
    }
    // Across objects, something arrived before a callback the gateway wrote earlier.
    const written = new Map(
      (await gatewayQuery<{ id: string; event_id: string }>('SELECT id, event_id FROM callback_outbox')).map(
        (r) => [r.event_id, Number(r.id)],
      ),
    );
    const order = [...new Set(seen.map((s) => s.eventId))].map((e) => written.get(e) ?? 0);
    expect(order.some((id, i) => order.slice(i + 1).some((later) => later < id))).toBe(true);
    // And some attempts were dropped on purpose, then redelivered.
    const dropped = await gatewayQuery(
      `SELECT id FROM callback_outbox WHERE last_error LIKE 'sandbox fault: dropped%' AND delivered_at IS NOT NULL`,
    );
    expect(dropped.length).toBeGreaterThan(0);
  }, 60_000);
});
