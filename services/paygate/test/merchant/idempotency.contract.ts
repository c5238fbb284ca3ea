import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_SECRET, testCatalog } from '../support/catalog.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { exchangeInvoice, signed } from '../support/invoice-form.js';
import { signedHeaders } from '../support/merchant.js';
import type { Target } from '../support/targets.js';

/** `Idempotency-Key` on invoices and payouts, on PostgreSQL and PGlite. */
export function idempotencyContract(target: Target): void {
  describe(`Idempotency-Key (${target.name})`, () => {
    let gateway: RunningGateway;
    let offsetMs = 0;
    beforeAll(async () => {
      gateway = await startGateway({
        db: target.db(),
        catalog: testCatalog({ callbackUrl: 'http://127.0.0.1:9/none' }),
        now: () => Date.now() + offsetMs,
        startWorker: false,
      });
    });
    afterAll(async () => {
      await gateway?.close();
    });

    // Signed once per body (README "Signed invoice forms"): a retry resends the same `expires` and
    // `signature`, so the same key with the same parameters replays.
    const invoiceBody = (reference = `dep-${randomUUID()}`, amount = '500') =>
      exchangeInvoice(reference, amount);
    const post = async (path: string, body: unknown, key?: string, signed = false) => {
      const raw = JSON.stringify(body);
      const response = await fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: {
          ...(signed
            ? signedHeaders(SANDBOX_SECRET, raw, { timestamp: Math.floor((Date.now() + offsetMs) / 1000) })
            : { 'content-type': 'application/json' }),
          ...(key === undefined ? {} : { 'idempotency-key': key }),
        },
        body: raw,
      });
      return {
        status: response.status,
        replayed: response.headers.get('idempotent-replayed'),
        text: await response.text(),
      };
    };

    it('replays the first answer to a retry with the same key, byte for byte', async () => {
      const key = `k-${randomUUID()}`;
      const body = invoiceBody();
      const first = await post('/public-api/payment-invoices', body, key);
      expect(first.status).toBe(201);
      expect(first.replayed).toBeNull();
      const again = await post('/public-api/payment-invoices', { ...body }, key);
      expect(again.status).toBe(201);
      expect(again.replayed).toBe('true');
      expect(again.text).toBe(first.text);
    });

    it('answers 409 naming the key when it comes with other parameters', async () => {
      const key = `k-${randomUUID()}`;
      expect((await post('/public-api/payment-invoices', invoiceBody(), key)).status).toBe(201);
      const otherBody = invoiceBody();
      const other = await post('/public-api/payment-invoices', otherBody, key);
      expect(other.status).toBe(409);
      const error = JSON.parse(other.text).error;
      expect(error.name).toBe('idempotency_key_reused');
      expect(error.message).toContain(key);
      // Refused as a whole: the other parameters' invoice was not created (its transaction rolled back).
      const { rows } = await target
        .db()
        .query<{ n: number }>('SELECT count(*)::int AS n FROM invoices WHERE reference_id = $1', [
          otherBody.reference_id,
        ]);
      expect(rows[0]!.n).toBe(0);
    });

    it("replays the first answer to a retry after the form's expiry (the key decides before the form's checks)", async () => {
      const key = `k-${randomUUID()}`;
      const body = signed({ ...invoiceBody() }, { expires: Math.floor(Date.now() / 1000) + 60 });
      const first = await post('/public-api/payment-invoices', body, key);
      expect(first.status).toBe(201);
      offsetMs = 120_000;
      try {
        const late = await post('/public-api/payment-invoices', body, key);
        expect(late.status).toBe(201);
        expect(late.replayed).toBe('true');
        expect(late.text).toBe(first.text);
        // Without the key, the same late form is refused as expired.
        const again = await post('/public-api/payment-invoices', body);
        expect(again.status).toBe(401);
        expect(JSON.parse(again.text).error.name).toBe('form_expired');
      } finally {
        offsetMs = 0;
      }
    });

    it('runs one of many concurrent requests under one key; the others get 409 in use or the replay', async () => {
      const key = `k-${randomUUID()}`;
      const body = invoiceBody();
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => post('/public-api/payment-invoices', body, key)),
      );
      const fresh = answers.filter((a) => a.status === 201 && a.replayed === null);
      expect(fresh).toHaveLength(1);
      for (const answer of answers) {
        if (answer.status === 409) expect(JSON.parse(answer.text).error.name).toBe('idempotency_key_in_use');
        else expect(answer.text).toBe(fresh[0]?.text);
      }
    });

    it('stores a 4xx answer too, and a different route under the same key is a conflict', async () => {
      const key = `k-${randomUUID()}`;
      const tooSmall = invoiceBody(undefined, '1');
      const first = await post('/public-api/payment-invoices', tooSmall, key);
      expect(first.status).toBe(422);
      const again = await post('/public-api/payment-invoices', tooSmall, key);
      expect(again.replayed).toBe('true');
      expect(again.text).toBe(first.text);
      const payout = await post(
        '/merchant-api/payouts',
        { reference_id: 'x', service: 'payment_card_uah', currency: 'UAH', amount: '100', fields: {} },
        key,
        true,
      );
      expect(payout.status).toBe(409);
    });

    it('makes a payout once under a key, and a new key after 24 h runs again (the reference then answers 200)', async () => {
      const key = `k-${randomUUID()}`;
      const body = {
        reference_id: `po-${randomUUID()}`,
        service: 'payment_card_uah',
        currency: 'UAH',
        amount: '100',
        fields: { card_number: '4242424242424242' },
      };
      const first = await post('/merchant-api/payouts', body, key, true);
      expect(first.status).toBe(201);
      const replay = await post('/merchant-api/payouts', body, key, true);
      expect(replay).toMatchObject({ status: 201, replayed: 'true', text: first.text });
      offsetMs += 86_400_000 + 1_000;
      try {
        const later = await post('/merchant-api/payouts', body, key, true);
        expect(later.status).toBe(200);
        expect(later.replayed).toBeNull();
      } finally {
        offsetMs = 0;
      }
    });

    it('frees the key of a refused form signature: the corrected retry under the same key runs', async () => {
      const key = `k-${randomUUID()}`;
      const body = invoiceBody();
      const forged = await post('/public-api/payment-invoices', { ...body, signature: '0'.repeat(64) }, key);
      expect(forged.status).toBe(401);
      const corrected = await post('/public-api/payment-invoices', body, key);
      expect(corrected.status).toBe(201);
      expect(corrected.replayed).toBeNull();
      expect((await post('/public-api/payment-invoices', body, key)).replayed).toBe('true');
    });

    // Issue 41, "Gateway: keys anyone can take": the hostile requests verbatim. The public key is
    // public and the merchant's keys may be predictable (`inv-$REF`): a request that does not prove
    // the merchant (no valid form signature) must neither claim nor read a key of the merchant.
    it("does not let an unsigned create with a wrong service claim the merchant's key", async () => {
      const key = `inv-${randomUUID()}`;
      const body = invoiceBody();
      const { expires: _expires, signature: _signature, ...unsigned } = body;
      const hostile = await post(
        '/public-api/payment-invoices',
        { ...unsigned, service: 'no_such_service' },
        key,
      );
      // An unsigned create may not carry a key at all (README "Unsigned invoices"): 401 before any lookup.
      expect(hostile.status).toBe(401);
      expect(hostile.replayed).toBeNull();
      const merchants = await post('/public-api/payment-invoices', body, key);
      expect(merchants.status).toBe(201);
      expect(merchants.replayed).toBeNull();
      // The same with a forged signature: nothing taken either.
      const forgedKey = `inv-${randomUUID()}`;
      const forged = await post(
        '/public-api/payment-invoices',
        { ...body, service: 'no_such_service', signature: '0'.repeat(64) },
        forgedKey,
      );
      expect(forged.status).toBe(404);
      const second = invoiceBody();
      expect((await post('/public-api/payment-invoices', second, forgedKey)).status).toBe(201);
      const { rows } = await target
        .db()
        .query<{ n: number }>('SELECT count(*)::int AS n FROM idempotency_keys WHERE key = ANY($1)', [
          [key, forgedKey],
        ]);
      expect(rows[0]!.n).toBe(2);
    });

    it('answers an unsigned or forged create 401 alike under a used and a fresh key: no key is read', async () => {
      const used = `inv-${randomUUID()}`;
      const body = invoiceBody();
      expect((await post('/public-api/payment-invoices', body, used)).status).toBe(201);
      const fresh = `inv-${randomUUID()}`;
      const { expires: _expires, signature: _signature, ...unsigned } = body;
      const forged = { ...body, signature: '0'.repeat(64) };
      const newReference = { ...invoiceBody(), signature: '1'.repeat(64) };
      for (const hostile of [unsigned, forged, newReference]) {
        const underUsed = await post('/public-api/payment-invoices', hostile, used);
        const underFresh = await post('/public-api/payment-invoices', hostile, fresh);
        expect([underUsed.status, underFresh.status]).toEqual([401, 401]);
        expect(underUsed.replayed).toBeNull();
        expect(underUsed.text).not.toContain(used);
        expect(JSON.parse(underUsed.text).error).toEqual(JSON.parse(underFresh.text).error);
        expect(JSON.parse(underUsed.text).error.name).toBe('bad_form_signature');
      }
      // Nothing was taken under the fresh key: the merchant's own request under it runs.
      const merchants = await post('/public-api/payment-invoices', invoiceBody(), fresh);
      expect(merchants.status).toBe(201);
      expect(merchants.replayed).toBeNull();
    });

    it('refuses a malformed key with 400 and stores nothing for an unsigned request', async () => {
      const bad = await post('/public-api/payment-invoices', invoiceBody(), 'a b');
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.text).error.name).toBe('invalid_idempotency_key');
      const key = `k-${randomUUID()}`;
      const unsigned = await post('/merchant-api/payouts', { reference_id: 'x' }, key);
      expect(unsigned.status).toBe(401);
    });
  });
}
