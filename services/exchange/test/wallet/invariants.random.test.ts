import { seedName, testSeeds } from '@platform/testkit/seeds';
import { describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/store.js';
import { issueApiKey } from '../../src/apikeys/store.js';
import { reconcile } from '../../src/ledger/reconcile.js';
import { credit } from '../support/accounts.js';
import { type Client, client } from '../support/client.js';
import { secretBox, usePostgresTarget } from '../support/targets.js';
import { admin, useWalletApp } from './support.js';

const target = usePostgresTarget();
const w = useWalletApp(target);

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

// 1411 always; TEST_SEED replaces it to repeat a failure, and CI adds a fresh seed (testkit seeds.ts).
const SEEDS = testSeeds([1411]);
const ACCOUNTS = 8;
const ROUNDS = 60;
const TO = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';

interface Player {
  id: number;
  api: Client;
  address: string;
}

async function checkInvariants(): Promise<void> {
  const report = await reconcile(w.db());
  expect(report.problems).toEqual([]);
  const negative = await w.db().query(
    `SELECT b.* FROM balances b JOIN accounts a ON a.id = b.account_id
      WHERE NOT a.may_go_negative AND (b.available < 0 OR b.locked < 0)`,
  );
  expect(negative.rows).toEqual([]);
  // Every deposit is credited at most once, and a credited deposit exactly once.
  const credits = await w
    .db()
    .query<{ reason: string; n: number }>(
      `SELECT reason, count(*)::int AS n FROM journal_entries WHERE kind = 'deposit' GROUP BY reason HAVING count(*) > 1`,
    );
  expect(credits.rows).toEqual([]);
  const mismatch = await w.db().query(
    `SELECT d.id, d.status, (SELECT count(*) FROM journal_entries e WHERE e.reason = 'deposit ' || d.id)::int AS entries
       FROM deposits d
      WHERE (d.status = 'credited') <> EXISTS (SELECT 1 FROM journal_entries e WHERE e.reason = 'deposit ' || d.id)`,
  );
  expect(mismatch.rows).toEqual([]);
  // A withdrawal's funds are locked while it is open: locked btc covers the open withdrawals.
  const uncovered = await w.db().query(
    `SELECT o.account_id FROM (
       SELECT account_id, sum(total_amount) AS held FROM withdrawals
        WHERE currency = 'btc' AND status IN ('awaiting_confirmation', 'queued', 'sending') GROUP BY account_id) o
       JOIN balances b ON b.account_id = o.account_id AND b.currency = 'btc'
      WHERE b.locked < o.held`,
  );
  expect(uncovered.rows).toEqual([]);
}

describe('wallet invariants under random concurrent use', () => {
  it.each(SEEDS.map((seed) => [seedName(seed), seed] as const))(
    `deposits, confirmations, withdrawals (confirm, cancel, expire) and trading from ${ACCOUNTS} accounts, %s`,
    async (_name, seed) => {
      const rng = random(seed);
      const players: Player[] = [];
      for (let i = 0; i < ACCOUNTS; i++) {
        const account = await w.db().transaction((tx) =>
          createAccount(tx, {
            email: `inv-${i}-${Date.now()}@example.com`,
            withdrawConfirmation: i % 2 === 0,
          }),
        );
        const { key, secret } = await issueApiKey(w.db(), secretBox, account.id, [
          'read',
          'trade',
          'withdraw',
        ]);
        const api = client(w.app, key.publicKey, secret);
        await api.v3('/v3/auth/payment_addresses', { currency: 'btc' });
        const { address } = (await api.v3('/v3/auth/deposit/info', { currency: 'btc' })).json();
        await credit(w.db(), account.id, 'uah', 2_000_000n * 10n ** 6n);
        await credit(w.db(), account.id, 'btc', 10n ** 10n);
        players.push({ id: account.id, api, address });
      }
      // Deposits of earlier batches, in the order they were drawn: `confirm` picks from these only, so
      // what it picks does not depend on which deposit of its own batch finished first.
      const txids: string[] = [];
      // Every random value of an operation is drawn before its first await (a draw after one would
      // depend on the order concurrent operations finish in, and TEST_SEED would not repeat a run).
      const draw = {
        deposit: () => {
          const p = rng.pick(players);
          const amount = rng.pick(['0.00005', '0.01', '0.25', '1', '0.3333']);
          const confirmations = String(rng.int(0, 2));
          return async (): Promise<string> => {
            const out = await admin(
              w,
              'deposit',
              'simulate',
              'btc',
              p.address,
              amount,
              '--confirmations',
              confirmations,
            );
            return out.txid as string;
          };
        },
        confirm: () => {
          const known = txids.length;
          const which = rng.next();
          const confirmations = String(rng.int(0, 4));
          return async (): Promise<void> => {
            if (known === 0) return;
            const txid = txids[Math.floor(which * known)] as string;
            await admin(w, 'deposit', 'confirm', txid, '--confirmations', confirmations);
          };
        },
        withdraw: () => {
          const p = rng.pick(players);
          const amount = rng.pick(['0.002', '0.05', '0.4', '3']);
          const withdrawall = rng.next() < 0.3;
          return async (): Promise<void> => {
            await p.api.v3('/v3/auth/withdraw', { withdraw_type: 'btc', amount, address: TO, withdrawall });
          };
        },
        decide: () => {
          const which = rng.next();
          const choice = rng.int(0, 2);
          return async (): Promise<void> => {
            const rows = await awaitingConfirmation();
            if (rows.length === 0) return;
            const id = (rows[Math.floor(which * rows.length)] as { id: number }).id;
            await decide(id, choice === 0 ? 'confirm' : choice === 1 ? 'cancel' : 'expire');
          };
        },
        trade: () => {
          const p = rng.pick(players);
          const sell = rng.next() < 0.5;
          const amount = `${sell ? '-' : ''}${rng.pick(['0.01', '0.05', '0.2'])}`;
          const price = String(rng.int(95, 105) * 10_000);
          return async (): Promise<void> => {
            await p.api.v3('/v3/auth/w/order/submit', { symbol: 'btcuah', type: 'limit', amount, price });
          };
        },
        tick: () => async (): Promise<void> => {
          await w.wallet().tick();
        },
      };
      const awaitingConfirmation = async () =>
        (
          await w.db().query<{ id: number }>(
            // This case's own: another seed's case left requests of its accounts in the database.
            `SELECT id FROM withdrawals WHERE status = 'awaiting_confirmation' AND account_id = ANY($1) ORDER BY id`,
            [players.map((p) => p.id)],
          )
        ).rows;
      const decide = async (id: number, decision: 'confirm' | 'cancel' | 'expire'): Promise<void> => {
        if (decision === 'expire') {
          await w.db().query(
            `UPDATE withdrawals SET confirm_expires_at = now() - interval '1 second'
              WHERE id = $1 AND status = 'awaiting_confirmation'`,
            [id],
          );
          return;
        }
        await w.db().transaction((tx) => w.wallet().handleLink(tx, id, decision));
      };
      // Weighted: withdrawals and their confirmation decisions are the paths under test.
      const names: (keyof typeof draw)[] = [
        'deposit',
        'confirm',
        'withdraw',
        'withdraw',
        'decide',
        'decide',
        'trade',
        'tick',
      ];
      for (let round = 0; round < ROUNDS; round++) {
        const batch = Array.from({ length: rng.int(2, 5) }, () => rng.pick(names));
        const deposits: Promise<string>[] = [];
        const others: Promise<void>[] = [];
        for (const name of batch) {
          if (name === 'deposit') deposits.push(draw.deposit()());
          else others.push(draw[name]()());
        }
        const [made] = await Promise.all([Promise.all(deposits), Promise.all(others)]);
        txids.push(...made);
        await checkInvariants();
      }
      await w.wallet().tick();
      await checkInvariants();

      // Every path must have been taken, and not only refused. A random run may miss one (a fresh
      // seed in CI did: no withdrawal expired), so each missing path is taken here on purpose, with
      // the invariants checked after; then each outcome must be there.
      const mine = players.map((p) => p.id);
      const statuses = async (table: 'deposits' | 'withdrawals'): Promise<Set<string>> =>
        new Set(
          (
            await w
              .db()
              .query<{ status: string }>(`SELECT DISTINCT status FROM ${table} WHERE account_id = ANY($1)`, [
                mine,
              ])
          ).rows.map((r) => r.status),
        );
      const [confirming, direct] = [players[0] as Player, players[1] as Player]; // even i: confirmation on
      await credit(w.db(), confirming.id, 'btc', 10n ** 8n);
      await credit(w.db(), direct.id, 'btc', 10n ** 8n);
      const withdrawal = async (p: Player): Promise<number> => {
        const response = await p.api.v3('/v3/auth/withdraw', {
          withdraw_type: 'btc',
          amount: '0.002',
          address: TO,
        });
        expect(response.statusCode).toBe(200);
        return (response.json() as [{ withdrawal_id: number }])[0].withdrawal_id;
      };
      if (!(await statuses('deposits')).has('credited')) {
        const { txid } = await admin(w, 'deposit', 'simulate', 'btc', confirming.address, '0.01');
        await admin(w, 'deposit', 'confirm', txid as string, '--confirmations', '6');
      }
      const before = await statuses('withdrawals');
      if (!before.has('canceled')) await decide(await withdrawal(confirming), 'cancel');
      if (!before.has('expired')) await decide(await withdrawal(confirming), 'expire');
      if (!before.has('done')) await withdrawal(direct);
      await w.wallet().tick();
      await w.wallet().tick();
      await checkInvariants();
      expect([...(await statuses('deposits'))]).toContain('credited');
      expect([...(await statuses('withdrawals'))].sort()).toEqual(
        expect.arrayContaining(['canceled', 'done', 'expired']),
      );
      const tradeCount = async () =>
        (
          await w
            .db()
            .query<{ n: number }>(
              'SELECT count(*)::int AS n FROM trades WHERE buy_account = ANY($1) OR sell_account = ANY($1)',
              [mine],
            )
        ).rows[0]?.n ?? 0;
      if ((await tradeCount()) === 0) {
        await confirming.api.v3('/v3/auth/w/order/submit', {
          symbol: 'btcuah',
          type: 'limit',
          amount: '-0.01',
          price: '1000000',
        });
        await direct.api.v3('/v3/auth/w/order/submit', {
          symbol: 'btcuah',
          type: 'limit',
          amount: '0.01',
          price: '1000000',
        });
        await checkInvariants();
      }
      expect(await tradeCount()).toBeGreaterThan(0);
    },
    60_000,
  );
});
