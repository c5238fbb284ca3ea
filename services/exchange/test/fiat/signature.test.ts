import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { paygateHeaders, verifyPaygate } from '../../src/fiat/signature.js';

const secret = 'sandbox-exchange-secret';
const options = { merchantId: 'exchange', secret, nowMs: 1_700_000_000_000, windowS: 300 };

describe('gateway signatures', () => {
  it('signs hex(HMAC-SHA256(secret, "<timestamp>.<raw body>")) as the contract says', () => {
    const body = '{"a": 1}';
    const headers = paygateHeaders('exchange', secret, body, options.nowMs);
    expect(headers['x-paygate-timestamp']).toBe('1700000000');
    expect(headers['x-paygate-signature']).toBe(
      createHmac('sha256', secret).update(`1700000000.${body}`).digest('hex'),
    );
    expect(verifyPaygate({ headers, rawBody: Buffer.from(body) }, options)).toEqual({ ok: true });
  });

  it('refuses a changed body, another secret, another merchant, a stale time and missing headers', () => {
    const body = '{"a":1}';
    const headers = paygateHeaders('exchange', secret, body, options.nowMs);
    const check = (h: Record<string, string | undefined>, raw = body, now = options.nowMs) =>
      verifyPaygate({ headers: h, rawBody: Buffer.from(raw) }, { ...options, nowMs: now });
    expect(check(headers, '{"a":2}')).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(check(paygateHeaders('exchange', 'another-secret', body, options.nowMs))).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    expect(check({ ...headers, 'x-paygate-merchant': 'other' })).toMatchObject({
      reason: 'unknown_merchant',
    });
    expect(check(headers, body, options.nowMs + 301_000)).toMatchObject({ reason: 'stale' });
    expect(check(headers, body, options.nowMs - 301_000)).toMatchObject({ reason: 'stale' });
    expect(check(headers, body, options.nowMs + 299_000)).toEqual({ ok: true });
    expect(check({ ...headers, 'x-paygate-signature': undefined })).toMatchObject({
      reason: 'missing_headers',
    });
    expect(check({ ...headers, 'x-paygate-signature': 'zz' })).toMatchObject({ reason: 'bad_signature' });
    // lower-case hex only (issue 28): an upper-case copy of the right signature is refused
    const upper = headers['x-paygate-signature']!.toUpperCase();
    expect(check({ ...headers, 'x-paygate-signature': upper })).toMatchObject({ reason: 'bad_signature' });
  });

  it('accepts the previous secret too while it is set (a rotation at the gateway), and no third one', () => {
    const body = '{"event_id":"inv_1:success"}';
    const rotation = { ...options, secret: 'the-new-secret', previousSecret: secret };
    const check = (signedWith: string, opts: typeof options & { previousSecret?: string }) =>
      verifyPaygate(
        { headers: paygateHeaders('exchange', signedWith, body, options.nowMs), rawBody: Buffer.from(body) },
        opts,
      );
    expect(check('the-new-secret', rotation)).toEqual({ ok: true });
    expect(check(secret, rotation)).toEqual({ ok: true });
    expect(check('a-third-secret', rotation)).toMatchObject({ ok: false, reason: 'bad_signature' });
    // without the previous secret set, a callback signed with it is refused
    expect(check(secret, { ...options, secret: 'the-new-secret' })).toMatchObject({
      reason: 'bad_signature',
    });
  });
});
