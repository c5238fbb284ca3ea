import { seedName, testSeeds } from '@platform/testkit/seeds';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { generateCode } from '../../src/codes/format.js';
import { DEFAULT_FAILURE_LIMITS } from '../../src/codes/limits.js';
import { TransferCodes } from '../../src/codes/service.js';
import { escrowBalances, liveCodeTotals } from '../../src/codes/store.js';
import type { App } from '../../src/http/typed.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { credit } from '../support/accounts.js';
import { reference, secretBox, type Target } from '../support/targets.js';
import { fundedUser, units } from './support.js';

/** A small seeded generator, so a failing run can be repeated (TEST_SEED, named in the test). */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  return { next, int, pick: <T>(items: readonly T[]): T => items[int(0, items.length - 1)]! };
}

type User = Awaited<ReturnType<typeof fundedUser>>;
interface Issued {
  readonly id: number;
  readonly code: string;
  readonly currency: string;
}

/**
 * Random creates, redeems (some racing for one code), cancels, holds, releases and trades from many
 * accounts, in concurrent waves. After every wave: the ledger reconciles (entries balanced, balances
 * equal their legs, none negative) and the escrow holds exactly the sum of the live codes per currency;
 * no request ever fails with a 5xx.
 */
/** `seed` always runs; TEST_SEED replaces it to repeat a failure, CI adds a fresh one (testkit seeds.ts). */
export function invariantsContract(target: Target, waves: number, seed: number): void {
  describe(`transfer codes: invariants under random traffic (${target.name})`, () => {
    let app: App;
    let offset = 0;
    const now = () => Date.now() + offset;
    beforeAll(async () => {
      app = await buildApp({
        db: target.db(),
        reference,
        secretBox,
        now,
        nonceWindowMs: 86_400_000,
        // Random unknown codes are part of the traffic; the limits have their own tests.
        codeFailureLimits: { perAccount: 1_000_000, perAddress: 1_000_000, windowMs: 60_000 },
      });
    });
    afterAll(async () => {
      await app?.close();
    });

    it.each(testSeeds([seed]).map((each) => [seedName(each), each] as const))(
      `keeps escrow = live codes and a clean ledger after every wave (${waves} waves), %s`,
      async (_name, seed) => {
        const rng = random(seed);
        const users: User[] = [];
        for (let i = 0; i < 8; i += 1) {
          const user = await fundedUser(target, () => app, ['read', 'trade', 'withdraw']);
          await credit(target.db(), user.id, 'uah', units('uah', '2000000'));
          users.push(user);
        }
        const operator = new TransferCodes({
          db: target.db(),
          secretBox,
          limits: DEFAULT_FAILURE_LIMITS,
          now,
        });
        const issued: Issued[] = [];
        const seen = new Map<string, number>();
        const count = (what: string) => seen.set(what, (seen.get(what) ?? 0) + 1);

        const operation = async (user: User): Promise<number> => {
          const roll = rng.next();
          if (roll < 0.3 || issued.length === 0) {
            const currency = rng.pick(['btc', 'eth']);
            const amount = currency === 'btc' ? `0.${rng.int(1, 400)}` : `${rng.int(1, 40) / 10}`;
            const other = rng.pick(users);
            const response = await user.client.create({
              amount,
              currency,
              ...(rng.next() < 0.3 ? { recipient: other.svcid } : {}),
              ...(rng.next() < 0.3
                ? { non_refundable_before: new Date(now() + rng.int(-2, 2) * 60_000).toISOString() }
                : {}),
            });
            if (response.statusCode === 200) issued.push({ ...response.json<Issued>(), currency });
            count(`create ${response.statusCode}`);
            return response.statusCode;
          }
          if (roll < 0.6) {
            const target = rng.pick(issued);
            const variant = rng.next();
            const text =
              variant < 0.1
                ? generateCode(target.currency).code
                : variant < 0.15
                  ? target.code.replace(/-(BTC|ETH)-/, (m) => (m === '-BTC-' ? '-ETH-' : '-BTC-'))
                  : target.code;
            const response = await user.client.redeem(text, `10.6.0.${rng.int(1, 4)}`);
            count(`redeem ${response.statusCode}`);
            return response.statusCode;
          }
          if (roll < 0.7) {
            const outcome = await operator.act(
              rng.pick(issued).id,
              rng.pick(['cancel', 'hold', 'release'] as const),
            );
            count(`operator ${outcome.ok ? 'ok' : outcome.error}`);
            return outcome.ok ? 200 : 409;
          }
          const sell = rng.next() < 0.5;
          const response = await user.client.call('POST', '/v3/auth/w/order/submit', {
            symbol: 'btcuah',
            type: rng.next() < 0.8 ? 'limit' : 'market',
            amount: `${sell ? '-' : ''}0.00${rng.int(1, 9)}`,
            price: String(1_500_000 + rng.int(-5, 5) * 1_000),
          });
          count(`order ${response.statusCode}`);
          return response.statusCode;
        };

        const check = async (wave: number) => {
          const report = await reconcile(target.db());
          expect(report.problems, `wave ${wave}`).toEqual([]);
          const escrowed = await escrowBalances(target.db());
          const live = await liveCodeTotals(target.db());
          for (const currency of new Set([...escrowed.keys(), ...live.keys()])) {
            expect(escrowed.get(currency) ?? 0n, `wave ${wave}: escrow ${currency}`).toBe(
              live.get(currency) ?? 0n,
            );
          }
        };

        for (let wave = 0; wave < waves; wave += 1) {
          // Distinct accounts within a wave: one key's concurrent requests would race on its nonce.
          const order = [...users].sort(() => rng.next() - 0.5).slice(0, 5);
          let statuses: number[];
          if (issued.length > 0 && rng.next() < 0.15) {
            // A race: every account of the wave redeems the same code; at most one wins.
            const contested = rng.pick(issued);
            const answers = await Promise.all(order.map((user) => user.client.redeem(contested.code)));
            statuses = answers.map((answer) => answer.statusCode);
            expect(statuses.filter((status) => status === 200).length, `wave ${wave}`).toBeLessThanOrEqual(1);
            count('race');
          } else {
            statuses = await Promise.all(order.map((user) => operation(user)));
          }
          for (const status of statuses) expect(status, `wave ${wave}`).toBeLessThan(500);
          if (wave % 7 === 3) offset += 90_000;
          await check(wave);
        }
        // Whatever the path, the traffic did create, redeem and refuse codes.
        expect(seen.get('create 200') ?? 0).toBeGreaterThan(5);
        expect(seen.get('redeem 200') ?? 0).toBeGreaterThan(2);
        expect([...seen.keys()].some((key) => key.startsWith('redeem 4'))).toBe(true);
      },
    );
  });
}
