import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '@platform/logging/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { CliError, runCli } from '../../src/cli/commands.js';
import { checkCode, generateCode } from '../../src/codes/format.js';
import { CODE_HISTORY_ID_OFFSET } from '../../src/codes/history.js';
import { CodeCommandError, runCodeCommand } from '../../src/codes/operator.js';
import type { App } from '../../src/http/typed.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { DEMO_ACCOUNTS, seedDemo } from '../../src/seed.js';
import { reference, secretBox, type Target } from '../support/targets.js';
import { available, type CodeClient, codeClient, escrow, fundedUser, snapshot, units } from './support.js';

interface CodeBody {
  id: number;
  sn: string;
  code: string;
  recipient: string;
  amount: string;
  currency: string;
  status: string;
  non_refundable_before: string;
  created_at: string;
  redeemed_at: string | null;
  comment: string;
  private_comment: string;
}

const HOUR = 3_600_000;

/** Transfer codes over HTTP (inject) on one storage: the new-user flow, refusals, scopes, lists. */
export function codesContract(target: Target): void {
  describe(`transfer codes (${target.name})`, () => {
    let app: App;
    /** The app's clock runs `offset` ms ahead of real time (refund times); nonces allow a day. */
    let offset = 0;
    const logs: string[] = [];
    const issuedCodes: string[] = [];
    const operator = (sub: string, ref: string, reason?: string) =>
      runCodeCommand(
        { db: target.db(), reference, secretBox, now: () => Date.now() + offset },
        sub,
        ref,
        reason ? { reason } : {},
      );
    const created = async (client: CodeClient, body: unknown): Promise<CodeBody> => {
      const response = await client.create(body);
      expect(response.statusCode, response.body).toBe(200);
      const code = response.json<CodeBody>();
      issuedCodes.push(code.code);
      return code;
    };

    beforeAll(async () => {
      app = await buildApp({
        db: target.db(),
        reference,
        secretBox,
        now: () => Date.now() + offset,
        nonceWindowMs: 86_400_000,
        logger: createLogger({
          service: 'exchange',
          level: 'trace',
          format: 'json',
          destination: new Writable({
            write(chunk: Buffer, _encoding, done) {
              logs.push(chunk.toString('utf8'));
              done();
            },
          }),
        }),
      });
    });
    afterAll(async () => {
      await app?.close();
    });

    it('new user: demo creates a code for 0.01 BTC, demo2 checks it by its first segment and redeems it', async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'exchange-codes-'));
      const demo = await seedDemo(target.db(), secretBox, reference, dir);
      const demo2 = await seedDemo(target.db(), secretBox, reference, dir, DEMO_ACCOUNTS[1]);
      const alice = codeClient(() => app, demo.apiKey, demo.apiSecret);
      const bob = codeClient(() => app, demo2.apiKey, demo2.apiSecret);
      const aliceBtc = await available(target, demo.accountId, 'btc');
      const bobBtc = await available(target, demo2.accountId, 'btc');
      const escrowBtc = await escrow(target, 'btc');

      // As the SDKs of this API family send it: amount a JSON number, currency in lower case.
      const code = await created(alice, {
        amount: 0.01,
        currency: 'btc',
        comment: 'lunch',
        private_comment: 'for Bob',
      });
      expect(code).toMatchObject({
        recipient: 'all',
        amount: '0.01',
        currency: 'btc',
        status: 'active',
        redeemed_at: null,
        comment: 'lunch',
        private_comment: 'for Bob',
      });
      expect(code.code).toMatch(/^([1-9a-km-zA-HJ-NP-Z]{5}-){9}BTC-SCode$/);
      expect(checkCode(code.code).ok).toBe(true);
      expect(code.sn).toMatch(/^SC[A-Z0-9]{12}$/);
      expect(code.non_refundable_before).toBe(code.created_at);
      expect(await available(target, demo.accountId, 'btc')).toBe(aliceBtc - units('btc', '0.01'));
      expect(await escrow(target, 'btc')).toBe(escrowBtc + units('btc', '0.01'));

      const segment = code.code.slice(0, 5);
      const check = await app.inject({ method: 'GET', url: `/v3/svc_codes/${segment}/check` });
      expect(check.statusCode).toBe(200);
      expect(check.json()).toEqual({
        id: 0,
        sn: '',
        code: segment,
        recipient: '',
        amount: '0.01',
        currency: 'btc',
        status: 'active',
        non_refundable_before: code.non_refundable_before,
        created_at: code.created_at,
        redeemed_at: null,
        comment: '',
        private_comment: '',
      });

      const redeemed = await bob.redeem(code.code);
      expect(redeemed.statusCode, redeemed.body).toBe(200);
      const after = redeemed.json<CodeBody>();
      expect(after).toMatchObject({ id: code.id, code: code.code, status: 'redeemed', private_comment: '' });
      expect(after.redeemed_at).not.toBeNull();
      expect(await available(target, demo2.accountId, 'btc')).toBe(bobBtc + units('btc', '0.01'));
      expect(await available(target, demo.accountId, 'btc')).toBe(aliceBtc - units('btc', '0.01'));
      expect(await escrow(target, 'btc')).toBe(escrowBtc);

      const used = await app.inject({ method: 'GET', url: `/v3/svc_codes/${segment}/check` });
      expect(used.json()).toMatchObject({ status: 'redeemed', amount: '0.01', code: segment, recipient: '' });
      expect(used.json<CodeBody>().redeemed_at).toBe(after.redeemed_at);

      const mine = (await alice.issued()).json<CodeBody[]>();
      expect(mine[0]).toMatchObject({ id: code.id, status: 'redeemed', private_comment: 'for Bob' });
      const theirs = (await bob.redeemed()).json<CodeBody[]>();
      expect(theirs).toHaveLength(1);
      expect(theirs[0]).toMatchObject({
        id: code.id,
        code: code.code,
        comment: 'lunch',
        private_comment: '',
      });
      expect((await alice.details(code.id)).json()).toMatchObject({ id: code.id, status: 'redeemed' });
      expect((await bob.details(code.id)).statusCode).toBe(404);
      expect((await bob.issued()).json()).toEqual([]);

      // Assets history: an outgoing item of the owner, an incoming one (provider svc_code) of the redeemer.
      const btcId = reference.currency('btc')!.id;
      const out = (await alice.call('POST', '/v3/auth/assets-history/withdraws', {})).json<{
        items: {
          id: number;
          type: string;
          amount: number;
          currency: number;
          status: string;
          destination: string;
        }[];
      }>();
      // Code items have ids of their own range (src/codes/history.ts), never a withdrawal's id.
      expect(out.items.find((item) => item.id === CODE_HISTORY_ID_OFFSET + code.id)).toEqual({
        id: CODE_HISTORY_ID_OFFSET + code.id,
        type: 'withdraw',
        created_at: code.created_at,
        destination: 'svc_code',
        currency: btcId,
        amount: 0.01,
        status: 'done',
      });
      const incoming = (await bob.call('POST', '/v3/auth/assets-history', {})).json<{
        total_items: number;
        items: { id: number; type: string; destination: string }[];
        currencies: string[];
      }>();
      expect(incoming.items).toContainEqual({
        id: CODE_HISTORY_ID_OFFSET + code.id,
        type: 'deposit',
        created_at: after.redeemed_at,
        destination: 'svc_code',
        currency: btcId,
        amount: 0.01,
        status: 'done',
      });
      expect(
        incoming.items.filter((item) => item.type === 'withdraw' && item.destination === 'svc_code'),
      ).toEqual([]);
      expect(incoming.currencies).toContain('btc');
      expect((await reconcile(target.db())).problems).toEqual([]);
    });

    it('stores the code only encrypted and hashed, and never writes it to a log or a journal entry', async () => {
      const alice = await fundedUser(target, () => app);
      const bob = await fundedUser(target, () => app);
      const code = await created(alice.client, { amount: '0.002', currency: 'BTC' });
      expect((await bob.client.redeem(generateCode('btc').code)).statusCode).toBe(404);
      expect((await bob.client.redeem(code.code)).statusCode).toBe(200);
      const privatePart = code.code.split('-').slice(1, 9);
      const { rows } = await target
        .db()
        .query<{ row: string }>('SELECT row_to_json(c)::text AS row FROM svc_codes c');
      const { rows: entries } = await target
        .db()
        .query<{ reason: string }>('SELECT reason FROM journal_entries');
      const stored = [...rows.map((r) => r.row), ...entries.map((e) => e.reason)].join('\n');
      // Pasting the whole code into the public check's path is refused and not logged either.
      const pasted = await app.inject({
        method: 'GET',
        url: `/v3/svc_codes/${encodeURIComponent(code.code)}/check`,
      });
      expect(pasted.statusCode).toBe(400);
      const written = logs.join('');
      expect(written).toContain('/v3/auth/svc_codes/redeem');
      for (const full of issuedCodes) {
        for (const segment of full.split('-').slice(1, 9)) {
          expect(written).not.toContain(segment);
        }
      }
      for (const segment of privatePart) expect(stored).not.toContain(segment);
      expect(stored).toContain(code.code.slice(0, 5));
    });

    it('refuses each failed redemption with a clear error and leaves every balance as it was', async () => {
      const owner = await fundedUser(target, () => app);
      const bob = await fundedUser(target, () => app);
      const carol = await fundedUser(target, () => app);
      const soon = new Date(Date.now() + offset + HOUR).toISOString();
      const code = await created(owner.client, {
        amount: 0.1,
        currency: 'btc',
        recipient: bob.svcid,
        non_refundable_before: soon,
      });
      expect(code.recipient).toBe(bob.svcid);
      expect(code.non_refundable_before).toBe(soon);
      let before = await snapshot(target, [owner.id, bob.id, carol.id]);
      const refused = async (client: CodeClient, text: string, status: number, name: string) => {
        const response = await client.redeem(text);
        expect(response.statusCode, response.body).toBe(status);
        expect(response.json().error.name).toBe(name);
        expect(await snapshot(target, [owner.id, bob.id, carol.id])).toBe(before);
      };
      await refused(carol.client, code.code, 403, 'svc_code_wrong_recipient');
      await refused(owner.client, code.code, 409, 'svc_code_not_refundable_yet');
      await refused(bob.client, code.code.replace('-BTC-', '-ETH-'), 400, 'svc_code_currency_mismatch');
      const broken = code.code.slice(0, 7) + (code.code[7] === 'a' ? 'b' : 'a') + code.code.slice(8);
      await refused(bob.client, broken, 400, 'svc_code_invalid');
      await refused(bob.client, 'hello', 400, 'svc_code_invalid');
      await refused(bob.client, generateCode('btc').code, 404, 'svc_code_not_found');

      expect(await operator('hold', String(code.id))).toMatchObject({ status: 'onhold', heldFrom: 'active' });
      await refused(bob.client, code.code, 409, 'svc_code_on_hold');
      expect(
        (await app.inject({ method: 'GET', url: `/v3/svc_codes/${code.code.slice(0, 5)}/check` })).json(),
      ).toMatchObject({ status: 'onhold' });
      await expect(operator('hold', code.sn)).rejects.toBeInstanceOf(CodeCommandError);
      expect(await operator('release', code.sn)).toMatchObject({ status: 'active', heldFrom: null });

      const bobBtc = await available(target, bob.id, 'btc');
      expect((await bob.client.redeem(code.code)).statusCode).toBe(200);
      expect(await available(target, bob.id, 'btc')).toBe(bobBtc + units('btc', '0.1'));
      before = await snapshot(target, [owner.id, bob.id, carol.id]);
      await refused(bob.client, code.code, 409, 'svc_code_already_redeemed');
      offset += 2 * HOUR;
      await refused(owner.client, code.code, 409, 'svc_code_already_redeemed');
      await expect(operator('cancel', String(code.id), 'too late')).rejects.toBeInstanceOf(CodeCommandError);
    });

    it('lets the owner take a code back after non_refundable_before, and an operator cancel one', async () => {
      const owner = await fundedUser(target, () => app);
      const other = await fundedUser(target, () => app);
      const start = await available(target, owner.id, 'eth');
      const later = await created(owner.client, {
        amount: '1.5',
        currency: 'eth',
        non_refundable_before: new Date(Date.now() + offset + HOUR).toISOString(),
      });
      expect((await owner.client.redeem(later.code)).json().error.name).toBe('svc_code_not_refundable_yet');
      offset += 2 * HOUR;
      const back = await owner.client.redeem(later.code);
      expect(back.statusCode, back.body).toBe(200);
      expect(back.json()).toMatchObject({ status: 'redeemed', private_comment: '' });
      expect(await available(target, owner.id, 'eth')).toBe(start);
      expect((await owner.client.redeemed()).json<CodeBody[]>()[0]).toMatchObject({ id: later.id });

      const canceled = await created(owner.client, { amount: '2', currency: 'eth', comment: 'oops' });
      expect(await available(target, owner.id, 'eth')).toBe(start - units('eth', '2'));
      await expect(operator('cancel', String(canceled.id))).rejects.toThrow(/--reason/);
      expect(await operator('cancel', canceled.code.slice(0, 5), 'asked by the owner')).toMatchObject({
        status: 'canceled',
      });
      expect(await available(target, owner.id, 'eth')).toBe(start);
      const snap = await snapshot(target, [owner.id, other.id]);
      const response = await other.client.redeem(canceled.code);
      expect(response.statusCode).toBe(409);
      expect(response.json().error.name).toBe('svc_code_canceled');
      expect(await snapshot(target, [owner.id, other.id])).toBe(snap);
      await expect(operator('cancel', String(canceled.id), 'again')).rejects.toBeInstanceOf(CodeCommandError);
      await expect(operator('release', String(canceled.id))).rejects.toBeInstanceOf(CodeCommandError);
      const { rows } = await target
        .db()
        .query<{ reason: string }>(`SELECT reason FROM journal_entries WHERE idempotency_key = $1`, [
          `svc_code:cancel:${canceled.id}`,
        ]);
      expect(rows[0]?.reason).toBe(`svc_code ${canceled.sn} cancel: asked by the owner`);
      expect((await reconcile(target.db())).problems).toEqual([]);
    });

    it('refuses bad creations with balances unchanged and no code written', async () => {
      const owner = await fundedUser(target, () => app);
      const before = await snapshot(target, [owner.id]);
      const count = async () =>
        (
          await target
            .db()
            .query<{ n: number }>('SELECT count(*)::int AS n FROM svc_codes WHERE owner_id = $1', [owner.id])
        ).rows[0]!.n;
      for (const [body, status, name] of [
        [{ amount: 5, currency: 'btc' }, 400, 'insufficient_funds'],
        [{ amount: 1, currency: 'doge' }, 404, 'unknown_currency'],
        [{ amount: 0, currency: 'btc' }, 400, 'validation_failed'],
        [{ amount: '-0.1', currency: 'btc' }, 400, 'validation_failed'],
        [{ amount: '0.000000001', currency: 'btc' }, 400, 'too_many_decimals'],
        [{ amount: 'lots', currency: 'btc' }, 400, 'validation_failed'],
        [{ amount: 0.1, currency: 'btc', recipient: 'NOBODY-HERE' }, 400, 'svc_code_unknown_recipient'],
        [{ amount: 0.1, currency: 'btc', non_refundable_before: 'tomorrow' }, 400, 'validation_failed'],
        [{ currency: 'btc' }, 400, 'validation_failed'],
      ] as const) {
        const response = await owner.client.create(body);
        expect(response.statusCode, JSON.stringify(body)).toBe(status);
        expect(response.json().error.name).toBe(name);
      }
      expect(await snapshot(target, [owner.id])).toBe(before);
      expect(await count()).toBe(0);
      // The whole available balance can go into one code; then nothing is left for a second one.
      expect((await owner.client.create({ amount: 1, currency: 'btc' })).statusCode).toBe(200);
      expect((await owner.client.create({ amount: 0.00000001, currency: 'btc' })).json().error.name).toBe(
        'insufficient_funds',
      );
      expect(await count()).toBe(1);
    });

    it('needs the withdraw scope to create and redeem, read to list; the check needs no key', async () => {
      const reader = await fundedUser(target, () => app, ['read']);
      const mover = await fundedUser(target, () => app, ['withdraw']);
      for (const response of [
        await reader.client.create({ amount: 0.01, currency: 'btc' }),
        await reader.client.redeem(generateCode('btc').code),
        await mover.client.issued(),
        await mover.client.redeemed(),
        await mover.client.details(1),
      ]) {
        expect(response.statusCode).toBe(403);
        expect(response.json().error.name).toBe('scope_missing');
      }
      expect((await reader.client.issued()).statusCode).toBe(200);
      const code = await created(mover.client, { amount: 0.01, currency: 'btc' });
      expect(
        (await app.inject({ method: 'GET', url: `/v3/svc_codes/${code.code.slice(0, 5)}/check` })).statusCode,
      ).toBe(200);
      const unsigned = await app.inject({
        method: 'POST',
        url: '/v3/auth/svc_codes/issued-by-me',
        payload: {},
      });
      expect(unsigned.statusCode).toBe(401);
    });

    it('answers the public check only for a well-formed, existing first segment', async () => {
      for (const [segment, status, name] of [
        ['0abcd', 400, 'svc_code_invalid'],
        ['abc', 400, 'svc_code_invalid'],
        ['abcdef', 400, 'svc_code_invalid'],
      ] as const) {
        const response = await app.inject({ method: 'GET', url: `/v3/svc_codes/${segment}/check` });
        expect(response.statusCode).toBe(status);
        expect(response.json().error.name).toBe(name);
      }
      // A segment no code has (58^5 of them, a few dozen codes in this database).
      const unknown = generateCode('btc').parsed.publicSegment;
      const response = await app.inject({ method: 'GET', url: `/v3/svc_codes/${unknown}/check` });
      expect(response.statusCode).toBe(404);
      expect(response.json().error.name).toBe('svc_code_not_found');
    });

    it('lists issued and redeemed codes with the spec defaults, filters, pages and orders', async () => {
      const owner = await fundedUser(target, () => app);
      const taker = await fundedUser(target, () => app);
      const made: CodeBody[] = [];
      for (let i = 1; i <= 12; i += 1) {
        made.push(
          await created(owner.client, {
            amount: i % 2 === 0 ? `0.0${i.toString().padStart(2, '0')}` : `0.${i}`,
            currency: i % 2 === 0 ? 'btc' : 'eth',
          }),
        );
      }
      // Redeem three (in a known order) and cancel one.
      for (const index of [2, 5, 7])
        expect((await taker.client.redeem(made[index]!.code)).statusCode).toBe(200);
      await operator('cancel', String(made[0]!.id), 'test');

      const ids = (response: { json: <T>() => T }) => response.json<CodeBody[]>().map((c) => c.id);
      const byCreation = made.map((c) => c.id);
      const page1 = await owner.client.issued();
      expect(ids(page1)).toEqual([...byCreation].reverse().slice(0, 10));
      expect(ids(await owner.client.issued({ page: 2 }))).toEqual([...byCreation].reverse().slice(10));
      expect(ids(await owner.client.issued({ page: 3 }))).toEqual([]);
      expect(ids(await owner.client.issued({ per_page: 5, page: 2, order_dir: 'asc' }))).toEqual(
        byCreation.slice(5, 10),
      );
      expect(ids(await owner.client.issued({ status: ['redeemed'] })).sort()).toEqual(
        [made[2]!.id, made[5]!.id, made[7]!.id].sort(),
      );
      expect(ids(await owner.client.issued({ status: 'canceled' }))).toEqual([made[0]!.id]);
      expect(ids(await owner.client.issued({ status: ['canceled', 'redeemed'], per_page: 20 }))).toHaveLength(
        4,
      );
      // By value across currencies: 0.11 ETH (11,000,000 minor units) is more than 0.002 BTC (20,000,000).
      const byAmount = (
        await owner.client.issued({ order_by: 'amount', order_dir: 'asc', per_page: 20 })
      ).json<CodeBody[]>();
      const values = byAmount.map((c) => Number(c.amount));
      expect(values).toEqual([...values].sort((a, b) => a - b));
      const byRedemption = ids(await owner.client.issued({ order_by: 'redeemed_at', per_page: 20 }));
      expect(byRedemption.slice(0, 3)).toEqual([made[7]!.id, made[5]!.id, made[2]!.id]);

      const redeemed = await taker.client.redeemed();
      expect(ids(redeemed)).toEqual([made[7]!.id, made[5]!.id, made[2]!.id]);
      expect(ids(await taker.client.redeemed({ order_dir: 'asc', per_page: 2 }))).toEqual([
        made[2]!.id,
        made[5]!.id,
      ]);
      for (const bad of [
        { status: ['lost'] },
        { order_by: 'sn' },
        { order_dir: 'up' },
        { page: 0 },
        { per_page: -1 },
      ]) {
        const response = await owner.client.issued(bad);
        expect(response.statusCode, JSON.stringify(bad)).toBe(400);
      }
      expect((await owner.client.details(String(made[3]!.id))).json()).toMatchObject({ id: made[3]!.id });
      expect((await taker.client.details(made[3]!.id)).statusCode).toBe(404);
      expect((await owner.client.details(999_999)).statusCode).toBe(404);

      // The operator tool lists and shows codes without their secret.
      const printed: unknown[] = [];
      const cli = (...argv: string[]) =>
        runCli(argv, { db: target.db(), reference, secretBox, print: (value) => printed.push(value) });
      expect(await cli('code', 'list', '--account', owner.svcid, '--status', 'redeemed')).toBe(0);
      expect((printed[0] as { id: number }[]).map((c) => c.id).sort()).toEqual(
        [made[2]!.id, made[5]!.id, made[7]!.id].sort(),
      );
      expect(await cli('code', 'show', made[1]!.sn)).toBe(0);
      expect(printed[1]).toMatchObject({
        id: made[1]!.id,
        publicSegment: made[1]!.code.slice(0, 5),
        status: 'active',
      });
      expect(JSON.stringify(printed)).not.toContain(made[1]!.code.split('-')[1]);
      await expect(cli('code', 'list', '--status', 'lost')).rejects.toBeInstanceOf(CliError);
      await expect(cli('code', 'show', 'nothing')).rejects.toBeInstanceOf(CliError);
      await expect(cli('code', 'frobnicate', made[1]!.sn)).rejects.toBeInstanceOf(CliError);
    });
  });
}
