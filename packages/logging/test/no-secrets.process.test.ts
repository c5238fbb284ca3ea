import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CapturedPlatform, hs256, secret, startCapturedPlatform } from './support/platform.js';

/**
 * The platform's services as real processes at `LOG_LEVEL=trace`, JSON lines captured; a realistic
 * flow through each (API keys and signed requests, a transfer code created, checked and redeemed, a
 * confirmation link, a card payment on the hosted page, a signed merchant payout, a JWT-authorised
 * event, proxied GraphQL with its upstream token, a rate-limit call with a token in its query, Redis
 * with a password); then every secret the run used is searched for in everything they printed.
 */
let platform: CapturedPlatform;
/** Every secret value the run used, by what it is. */
const used = new Map<string, string>();
const use = (what: string, value: string): string => {
  used.set(what, value);
  return value;
};

beforeAll(async () => {
  platform = await startCapturedPlatform();
  for (const [what, value] of Object.entries(platform.settingSecrets)) use(what, value);
}, 300_000);
afterAll(async () => {
  await platform?.stop();
});

let nonce = Date.now();
async function exchangeCall(keyFile: string, method: 'POST' | 'PUT', apiPath: string, body: unknown = {}) {
  const key = JSON.parse(readFileSync(join(platform.exchangeCwd, 'data/exchange', keyFile), 'utf8')) as {
    apiKey: string;
    apiSecret: string;
  };
  use(`${keyFile} apiSecret`, key.apiSecret);
  const text = JSON.stringify(body);
  const n = String(++nonce);
  const signature = use(
    `signature ${n}`,
    createHmac('sha384', key.apiSecret).update(`${apiPath}${n}${text}`).digest('hex'),
  );
  const response = await fetch(`${platform.exchange.url}${apiPath}`, {
    method,
    headers: {
      'content-type': 'application/json',
      'svc-nonce': n,
      'svc-apikey': key.apiKey,
      'svc-signature': signature,
    },
    body: text,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function postForm(url: string, fields: Record<string, string>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  await response.arrayBuffer();
  return { status: response.status, location: response.headers.get('location') };
}

describe('no secret in any log line of a full run', () => {
  it('exchange: demo keys, signed calls, a transfer code created, checked, redeemed; a confirmation link', async () => {
    expect((await exchangeCall('demo-api-key.json', 'POST', '/v3/auth/r/wallets')).status).toBe(200);
    const created = await exchangeCall('demo-api-key.json', 'POST', '/v3/auth/svc_codes', {
      amount: 0.01,
      currency: 'btc',
    });
    expect(created.status).toBe(200);
    const code = use('transfer code', created.body.code as string);
    // a user pastes the whole code into the public check (refused) and its first segment (answered)
    const pasted = await fetch(`${platform.exchange.url}/v3/svc_codes/${encodeURIComponent(code)}/check`);
    expect(pasted.status).toBe(400);
    const check = await fetch(`${platform.exchange.url}/v3/svc_codes/${code.slice(0, 5)}/check`);
    expect(check.status).toBe(200);
    const redeemed = await exchangeCall('demo2-api-key.json', 'PUT', '/v3/auth/svc_codes/redeem', { code });
    expect(redeemed.status).toBe(200);
    // a confirmation link opened and posted (unknown, so refused: the token is still in the path)
    const token = use('link token', randomBytes(32).toString('base64url'));
    const page = await fetch(`${platform.exchange.url}/v3/links/${token}`);
    expect(page.status).toBeGreaterThanOrEqual(400);
    const posted = await fetch(`${platform.exchange.url}/v3/links/${token}`, { method: 'POST' });
    expect(posted.status).toBeGreaterThanOrEqual(400);
  });

  it('paygate: a card payment on the hosted page and a signed merchant payout', async () => {
    const base = `${platform.paygate.url}/public-api/payment-invoices`;
    // The gateway creates an invoice only for a form the merchant signed (services/paygate README).
    const form = {
      public_key: 'pk_test_exchange_uah',
      reference_id: `logs-${Date.now()}`,
      service: 'payment_card_uah_hpp',
      currency: 'UAH',
      amount: 100,
      expires: Math.floor(Date.now() / 1000) + 600,
    };
    const formSignature = use(
      'invoice form signature',
      createHmac('sha256', platform.settingSecrets.merchantSecret ?? '')
        .update(
          JSON.stringify([
            'paygate-invoice-form/v1',
            form.public_key,
            form.reference_id,
            form.currency,
            String(form.amount),
            form.service,
            String(form.expires),
          ]),
        )
        .digest('hex'),
    );
    const created = await fetch(base, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...form, signature: formSignature }),
    });
    expect(created.status).toBeLessThan(300);
    const { data } = (await created.json()) as {
      data: { active_payment: { payload: { name: string; value: string }[] } };
    };
    const payload = Object.fromEntries(data.active_payment.payload.map((p) => [p.name, p.value]));
    use('page token', payload.token ?? '');
    const page = await fetch(
      `${base}/page?invoice_id=${encodeURIComponent(payload.invoice_id ?? '')}&token=${encodeURIComponent(payload.token ?? '')}`,
    );
    expect(page.status).toBe(200);
    const card = { expiry: '12/30', cvc: '987' };
    await postForm(`${base}/pay`, { ...payload, ...card, card_number: use('bad card', '4000000000003221') });
    const paid = await postForm(`${base}/pay`, {
      ...payload,
      ...card,
      card_number: use('card', '4000000000003220'),
    });
    if (paid.location) await (await fetch(new URL(paid.location, platform.paygate.url))).arrayBuffer();
    await postForm(`${base}/confirm`, { ...payload, code: '123456' });

    const body = JSON.stringify({
      reference_id: `logs-payout-${Date.now()}`,
      service: 'payment_card_uah',
      currency: 'UAH',
      amount: 50,
      fields: { card_number: use('payout card', '4242424242424241') },
    });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = use(
      'merchant signature',
      createHmac('sha256', platform.settingSecrets.merchantSecret ?? '')
        .update(`${timestamp}.${body}`)
        .digest('hex'),
    );
    const payout = await fetch(`${platform.paygate.url}/merchant-api/payouts`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-paygate-merchant': 'exchange',
        'x-paygate-timestamp': timestamp,
        'x-paygate-signature': signature,
      },
      body,
    });
    // signed and accepted as the merchant's (the default catalog may refuse the payout's fields: the
    // secrets were sent either way, which is what this test is about)
    const answer = await payout.text();
    expect([401, 403], answer).not.toContain(payout.status);
    expect(payout.status, answer).toBeLessThan(500);
  });

  it('events: an event written and read with a bearer token', async () => {
    const jwt = use(
      'events JWT',
      hs256(platform.settingSecrets.jwtSecret ?? '', {
        sub: 'logs-user',
        member: true,
        exp: Math.floor(Date.now() / 1000) + 600,
      }),
    );
    const auth = { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' };
    const put = await fetch(`${platform.events.url}/events/logs-event`, {
      method: 'PUT',
      headers: auth,
      body: JSON.stringify({ name: 'Logs', body: 'Searching logs', date: '2026-05-01T18:30:00+02:00' }),
    });
    expect(put.status).toBeLessThan(300);
    expect((await fetch(`${platform.events.url}/events/logs-event`, { headers: auth })).status).toBe(200);
    expect(
      (await fetch(`${platform.events.url}/events?token=${use('query token', secret('q'))}`)).status,
    ).toBe(200);
  });

  it('proxy and blog: a query and a mutation through the proxy, the queue read with the admin token', async () => {
    const gql = (query: string) =>
      fetch(`${platform.proxy.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
    expect((await gql('{ posts { nodes { id } } }')).status).toBe(200);
    expect((await gql('mutation { createTag(input: { name: "logs" }) { tag { id } } }')).status).toBeLessThan(
      300,
    );
    const queue = await fetch(`${platform.proxy.url}/queue`, {
      headers: { authorization: `Bearer ${platform.settingSecrets.adminToken}` },
    });
    expect(queue.status).toBe(200);
    const direct = await fetch(`${platform.blog.url}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${platform.settingSecrets.blogToken}`,
      },
      body: JSON.stringify({ query: 'mutation { createTag(input: { name: "direct" }) { tag { id } } }' }),
    });
    expect(direct.status).toBe(200);
  });

  it('ratelimit: decisions over Redis with a password, a token in the query string', async () => {
    const token = use('ratelimit query token', secret('rl'));
    const response = await fetch(`${platform.ratelimit.url}/json?access_token=${token}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify({
        domain: 'example',
        descriptors: [{ entries: [{ key: 'user', value: 'logs' }] }],
      }),
    });
    expect(response.status).toBeLessThan(500);
  });

  it('leaves every one of those secrets out of everything the services printed', async () => {
    // Stopping flushes every line still buffered.
    await platform.stop();
    const log = platform.log();
    // the run did log: requests of every service are there, probes included at this level
    for (const line of ['"service":"exchange"', '"service":"paygate"', '"service":"events"']) {
      expect(log).toContain(line);
    }
    for (const line of ['"service":"graphql-proxy"', '"service":"blog-graphql"', '"service":"ratelimit"']) {
      expect(log).toContain(line);
    }
    expect(used.size).toBeGreaterThanOrEqual(15);
    const leaked = [...used]
      .filter(([, value]) => value.length >= 8 && log.includes(value))
      .map(([what]) => what);
    expect(leaked).toEqual([]);
    expect(log).toContain('/v3/links/[REDACTED]');
    // transfer codes: no two adjacent segments after the public first one, with or without their
    // dash (a code may be logged in another form). One segment alone is too short to look for: five
    // characters turn up by chance in megabytes of ids now and then.
    const secretSegments = (used.get('transfer code') ?? '').split('-').slice(1);
    expect(secretSegments.length).toBeGreaterThanOrEqual(2);
    for (let i = 0; i + 1 < secretSegments.length; i++) {
      const [a, b] = [secretSegments[i] as string, secretSegments[i + 1] as string];
      expect(log).not.toContain(`${a}-${b}`);
      expect(log).not.toContain(`${a}${b}`);
    }
    // three- and six-digit form values could appear inside ids by chance: look for them as fields
    expect(log).not.toMatch(/"(cvc|card_number|code)":"\d/);
  });
});
