import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/apikeys/store.js';
import { buildApp } from '../../src/app.js';
import { generateCode } from '../../src/codes/format.js';
import type { FailureLimits } from '../../src/codes/limits.js';
import { TransferCodes } from '../../src/codes/service.js';
import type { App } from '../../src/http/typed.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { reference, secretBox, type Target } from '../support/targets.js';
import { available, type CodeClient, codeClient, escrow, fundedUser, snapshot, units } from './support.js';

const LIMITS: FailureLimits = { perAccount: 3, perAddress: 5, windowMs: 60_000 };

/** Redemption races and brute-force limits on one storage. */
export function securityContract(target: Target): void {
  describe(`transfer codes: races and brute force (${target.name})`, () => {
    let app: App;
    let limited: App;
    let offset = 0;
    const limitedApp = () =>
      buildApp({
        db: target.db(),
        reference,
        secretBox,
        codeFailureLimits: LIMITS,
        now: () => Date.now() + offset,
        nonceWindowMs: 86_400_000,
      });

    beforeAll(async () => {
      app = await buildApp({ db: target.db(), reference, secretBox });
      limited = await limitedApp();
    });
    afterAll(async () => {
      await app?.close();
      await limited?.close();
    });

    const newCode = async (client: CodeClient, amount = '0.01'): Promise<{ id: number; code: string }> => {
      const response = await client.create({ amount, currency: 'btc' });
      expect(response.statusCode, response.body).toBe(200);
      return response.json();
    };

    it('lets exactly one of many concurrent redeemers win, five times over', async () => {
      const owner = await fundedUser(target, () => app);
      const racers = [];
      for (let i = 0; i < 12; i += 1) racers.push(await fundedUser(target, () => app));
      for (let round = 0; round < 5; round += 1) {
        const code = await newCode(owner.client);
        const before = await Promise.all(racers.map((r) => available(target, r.id, 'btc')));
        const escrowBefore = await escrow(target, 'btc');
        const answers = await Promise.all(
          racers.map((racer, i) => racer.client.redeem(code.code, `10.0.${round}.${i + 1}`)),
        );
        const statuses = answers.map((a) => a.statusCode).sort();
        expect(statuses.filter((s) => s === 200)).toHaveLength(1);
        expect(statuses.filter((s) => s === 409)).toHaveLength(racers.length - 1);
        for (const answer of answers) {
          if (answer.statusCode === 409) expect(answer.json().error.name).toBe('svc_code_already_redeemed');
        }
        const winner = answers.findIndex((a) => a.statusCode === 200);
        const after = await Promise.all(racers.map((r) => available(target, r.id, 'btc')));
        for (let i = 0; i < racers.length; i += 1) {
          expect(after[i]).toBe(before[i]! + (i === winner ? units('btc', '0.01') : 0n));
        }
        expect(await escrow(target, 'btc')).toBe(escrowBefore - units('btc', '0.01'));
        const { rows } = await target
          .db()
          .query<{ redeemer_id: number }>('SELECT redeemer_id FROM svc_codes WHERE id = $1', [code.id]);
        expect(rows[0]?.redeemer_id).toBe(racers[winner]!.id);
      }
      expect((await reconcile(target.db())).problems).toEqual([]);
    });

    it('settles a redemption racing an operator cancel and the owner taking it back: money moves once', async () => {
      const owner = await fundedUser(target, () => app);
      const taker = await fundedUser(target, () => app);
      const codes = new TransferCodes({ db: target.db(), secretBox, limits: LIMITS, now: Date.now });
      for (let round = 0; round < 4; round += 1) {
        const code = await newCode(owner.client, '0.05');
        const ownerBefore = await available(target, owner.id, 'btc');
        const takerBefore = await available(target, taker.id, 'btc');
        const [redeem, cancel, takeBack] = await Promise.all([
          taker.client.redeem(code.code, '10.1.0.1'),
          codes.act(code.id, 'cancel', { note: 'race test' }),
          owner.client.redeem(code.code, '10.1.0.2'),
        ]);
        const wins = [redeem.statusCode === 200, cancel.ok, takeBack.statusCode === 200];
        expect(wins.filter(Boolean)).toHaveLength(1);
        const ownerGain = (await available(target, owner.id, 'btc')) - ownerBefore;
        const takerGain = (await available(target, taker.id, 'btc')) - takerBefore;
        expect(ownerGain + takerGain).toBe(units('btc', '0.05'));
        expect(takerGain).toBe(wins[0] ? units('btc', '0.05') : 0n);
      }
      expect((await reconcile(target.db())).problems).toEqual([]);
    });

    it('limits failed redemptions per account and per address with 429 and retry-after, across a restart', async () => {
      const owner = await fundedUser(target, () => limited);
      const guesser = await fundedUser(target, () => limited);
      const second = await fundedUser(target, () => limited);
      const genuine = await newCode(owner.client);
      const before = await snapshot(target, [owner.id, guesser.id, second.id]);
      const address = '10.9.0.1';
      for (let i = 0; i < LIMITS.perAccount; i += 1) {
        const response = await guesser.client.redeem(generateCode('btc').code, address);
        expect(response.statusCode).toBe(404);
      }
      // Past the limit even the genuine code is refused, with nothing moved.
      const blocked = await guesser.client.redeem(genuine.code, address);
      expect(blocked.statusCode).toBe(429);
      expect(blocked.json().error).toMatchObject({ name: 'svc_code_too_many_failures', code: 3110 });
      const retryAfter = Number(blocked.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(await snapshot(target, [owner.id, guesser.id, second.id])).toBe(before);

      // The address has 4 attempts counted: another account from it gets one more, then 429 too.
      expect((await second.client.redeem(generateCode('btc').code, address)).statusCode).toBe(404);
      expect((await second.client.redeem(genuine.code, address)).statusCode).toBe(429);
      // From another address the second account is fine (2 failures of 3 on its own counter).
      expect((await second.client.redeem(generateCode('btc').code, '10.9.0.2')).statusCode).toBe(404);

      // A new instance on the same database (or a restart) sees the same counters.
      await limited.close();
      limited = await limitedApp();
      const again = codeClient(() => limited, guesser.apiKey, guesser.secret);
      expect((await again.redeem(genuine.code, '10.9.0.3')).statusCode).toBe(429);

      // Once the window has passed, the genuine code goes through.
      offset += LIMITS.windowMs + 1_000;
      const redeemed = await again.redeem(genuine.code, address);
      expect(redeemed.statusCode, redeemed.body).toBe(200);
    });

    it('counts only unknown codes: successes, refusals that need the secret and bad checksums are free', async () => {
      const owner = await fundedUser(target, () => limited);
      const user = await fundedUser(target, () => limited);
      const address = '10.8.0.1';
      for (let i = 0; i < 6; i += 1) {
        const code = await newCode(owner.client, '0.001');
        expect((await user.client.redeem(code.code, address)).statusCode).toBe(200);
        expect((await user.client.redeem(code.code, address)).statusCode).toBe(409);
        const broken = code.code.replace(
          /^(.{6})(.)/,
          (_m, head: string, c: string) => head + (c === 'z' ? 'y' : 'z'),
        );
        expect((await user.client.redeem(broken, address)).statusCode).toBe(400);
      }
      // All three failures of the window are still available.
      for (let i = 0; i < LIMITS.perAccount; i += 1) {
        expect((await user.client.redeem(generateCode('btc').code, address)).statusCode).toBe(404);
      }
      expect((await user.client.redeem(generateCode('btc').code, address)).statusCode).toBe(429);
    });

    it('holds the limit under concurrent guesses: attempts are counted before the lookup', async () => {
      const guesser = await fundedUser(target, () => limited);
      // One key per request: concurrent requests of one key would race on its nonce instead.
      const clients: CodeClient[] = [];
      for (let i = 0; i < 20; i += 1) {
        const { key, secret } = await issueApiKey(target.db(), secretBox, guesser.id, ['withdraw']);
        clients.push(codeClient(() => limited, key.publicKey, secret));
      }
      const answers = await Promise.all(
        clients.map((client) => client.redeem(generateCode('btc').code, '10.7.0.1')),
      );
      const statuses = answers.map((a) => a.statusCode);
      expect(statuses.filter((s) => s === 404)).toHaveLength(LIMITS.perAccount);
      expect(statuses.filter((s) => s === 429)).toHaveLength(20 - LIMITS.perAccount);
    });
  });
}
