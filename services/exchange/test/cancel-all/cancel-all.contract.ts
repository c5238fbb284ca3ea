import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/commands.js';
import { reference, secretBox, type Target } from '../support/targets.js';
import { lockedOf, restingBuy, statesOf, tradingAccount, tradingKey, useServer } from './support.js';

/** Polls until `done` answers true, or fails after `ms`. */
async function until(done: () => Promise<boolean>, ms: number, stepMs = 20): Promise<void> {
  const end = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > end) throw new Error(`not done within ${ms} ms`);
    await sleep(stepMs);
  }
}

/**
 * Cancel all and the dead-man's switch through real signed HTTP calls on a listening server (the
 * default scheduler: a check every 200 ms).
 */
export function cancelAllContract(target: Target): void {
  describe(`cancel all and the dead-man's switch (${target.name})`, () => {
    const server = useServer(target);
    const db = () => target.db();
    const updatedAt = async (ids: number[]) =>
      (
        await db().query<{ t: string }>(
          'SELECT max(updated_at)::text AS t FROM orders WHERE id = ANY($1::bigint[])',
          [ids],
        )
      ).rows[0]!.t;

    it('cancel/all cancels every open order of the account (every key), per market or all, and frees the locks', async () => {
      const account = await tradingAccount(db());
      const a = await tradingKey(db(), account.id, server.url);
      const b = await tradingKey(db(), account.id, server.url);
      const btcA = await restingBuy(a.call);
      const btcB = await restingBuy(b.call, 'btcuah', '200');
      const eth = await restingBuy(b.call, 'ethuah', '100', '0.1');
      const stranger = await tradingAccount(db());
      const other = await restingBuy((await tradingKey(db(), stranger.id, server.url)).call);
      expect((await lockedOf(db(), account.id)).uah).toBeGreaterThan(0n);

      const unknown = await a.call('/v3/order/cancel/all', { market: 'nope' });
      expect([unknown.status, unknown.body.error.name]).toEqual([404, 'unknown_market']);
      const both = await a.call('/v3/order/cancel/all', { market: 'btcuah', symbol: 'ethuah' });
      expect([both.status, both.body.error.name]).toEqual([400, 'validation_failed']);

      const btc = await a.call('/v3/order/cancel/all', { market: 'btcuah' });
      expect(btc.status).toBe(200);
      expect(btc.body.map((o: { id: number }) => o.id).sort()).toEqual([btcA, btcB].sort());
      expect(btc.body[0]).toMatchObject({ symbol: 'btcuah', remaining_amount: '0.01' });
      expect(await statesOf(db(), [btcA, btcB, eth, other])).toEqual({
        [btcA]: 'cancel',
        [btcB]: 'cancel',
        [eth]: 'wait',
        [other]: 'wait',
      });

      // ccxt's cancelAllOrders (bitfinex2 style): {all: 1} on cancel/multi; `symbol` names a market too.
      const again = await a.call('/v3/order/cancel/all', { symbol: 'btcuah' });
      expect([again.status, again.body]).toEqual([200, []]);
      const all = await b.call('/v3/order/cancel/multi', { all: 1 });
      expect(all.status).toBe(200);
      expect(all.body.map((o: { id: number }) => o.id)).toEqual([eth]);
      expect(await statesOf(db(), [eth, other])).toEqual({ [eth]: 'cancel', [other]: 'wait' });
      const locked = await lockedOf(db(), account.id);
      expect([locked.uah, locked.btc ?? 0n, locked.eth ?? 0n]).toEqual([0n, 0n, 0n]);

      const readOnly = await tradingKey(db(), account.id, server.url, ['read']);
      const refused = await readOnly.call('/v3/order/cancel/all', {});
      expect([refused.status, refused.body.error.name]).toEqual([403, 'scope_missing']);
    });

    it('cancel-all-after: out of range is 400; 0 answers trigger "0"; times are RFC 3339', async () => {
      const account = await tradingAccount(db());
      const a = await tradingKey(db(), account.id, server.url);
      for (const timeout of [86_401, -1, 1.5, 'ten', '']) {
        const refused = await a.call('/v3/order/cancel-all-after', { timeout });
        expect([refused.status, refused.body.error.name], String(timeout)).toEqual([
          400,
          'validation_failed',
        ]);
      }
      const missing = await a.call('/v3/order/cancel-all-after', {});
      expect(missing.status).toBe(400);
      const before = Date.now();
      const armed = await a.call('/v3/order/cancel-all-after', { timeout: 86_400 });
      expect(armed.status).toBe(200);
      const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
      expect(armed.body.current_time).toMatch(rfc3339);
      expect(armed.body.trigger_time).toMatch(rfc3339);
      const current = Date.parse(armed.body.current_time);
      expect(current).toBeGreaterThanOrEqual(before - 5);
      expect(Date.parse(armed.body.trigger_time) - current).toBe(86_400_000);
      const off = await a.call('/v3/order/cancel-all-after', { timeout: '0' });
      expect([off.status, off.body.trigger_time]).toEqual([200, '0']);
    });

    it("the switch fires once within 1 s of its trigger, cancelling that key's open orders only", async () => {
      const account = await tradingAccount(db());
      const a = await tradingKey(db(), account.id, server.url);
      const b = await tradingKey(db(), account.id, server.url);
      const ofA = [await restingBuy(a.call), await restingBuy(a.call, 'ethuah', '100', '0.1')];
      const ofB = await restingBuy(b.call);
      const armed = await a.call('/v3/order/cancel-all-after', { timeout: 1 });
      const trigger = Date.parse(armed.body.trigger_time);
      // Placed after arming: the switch cancels what is open when it fires.
      ofA.push(await restingBuy(a.call, 'btcuah', '300'));
      await sleep(Math.max(0, trigger - Date.now() - 400));
      expect(Object.values(await statesOf(db(), ofA))).toEqual(['wait', 'wait', 'wait']);
      await until(async () => Object.values(await statesOf(db(), ofA)).every((s) => s === 'cancel'), 2_000);
      const late = Number(await updatedAt(ofA)) - trigger;
      expect(late).toBeGreaterThanOrEqual(0);
      expect(late).toBeLessThan(1_000);
      expect((await statesOf(db(), [ofB]))[ofB]).toBe('wait');
      expect((await lockedOf(db(), account.id)).eth ?? 0n).toBe(0n);
      // Once: an order placed after the firing stays.
      const after = await restingBuy(a.call);
      await sleep(500);
      expect((await statesOf(db(), [after]))[after]).toBe('wait');
      const row = await db().query<{ fired_at: string; trigger_at: string }>(
        'SELECT fired_at::text, trigger_at::text FROM cancel_after WHERE api_key_id = $1',
        [a.keyId],
      );
      // Recorded once every cancel was committed, within the bound too.
      const recorded = Number(row.rows[0]!.fired_at) - trigger;
      expect(recorded).toBeGreaterThanOrEqual(late);
      expect(recorded).toBeLessThan(1_000);
      // The cancels are ordinary ones: each order has one cancel command in its market's log.
      const { rows } = await db().query<{ n: number }>(
        `SELECT count(*)::int AS n FROM engine_commands, jsonb_array_elements(command) AS c
          WHERE c->>'type' = 'cancel' AND (c->>'id')::bigint = ANY($1::bigint[])`,
        [ofA],
      );
      expect(rows[0]!.n).toBe(3);
      const fired = await server.metrics.getSingleMetric('exchange_cancel_after_fired_total')?.get();
      expect(fired?.values[0]?.value).toBeGreaterThanOrEqual(1);
      const cancelled = await server.metrics
        .getSingleMetric('exchange_cancel_after_orders_cancelled_total')
        ?.get();
      expect(cancelled?.values[0]?.value).toBeGreaterThanOrEqual(3);
    });

    it('a renewal moves the trigger; timeout 0 disables the switch', async () => {
      const account = await tradingAccount(db());
      const a = await tradingKey(db(), account.id, server.url);
      const b = await tradingKey(db(), account.id, server.url);
      const ofA = await restingBuy(a.call);
      const ofB = await restingBuy(b.call);
      const first = Date.parse(
        (await a.call('/v3/order/cancel-all-after', { timeout: 2 })).body.trigger_time,
      );
      await b.call('/v3/order/cancel-all-after', { timeout: 2 });
      await sleep(800);
      const renewed = await a.call('/v3/order/cancel-all-after', { timeout: 3 });
      const trigger = Date.parse(renewed.body.trigger_time);
      const disabled = await b.call('/v3/order/cancel-all-after', { timeout: 0 });
      // Both calls came before the first trigger (a loaded machine could delay them past it).
      expect(Date.parse(disabled.body.current_time)).toBeLessThan(first);
      await sleep(Math.max(0, first + 600 - Date.now()));
      // Past the first trigger: neither fired.
      expect(await statesOf(db(), [ofA, ofB])).toEqual({ [ofA]: 'wait', [ofB]: 'wait' });
      await until(async () => (await statesOf(db(), [ofA]))[ofA] === 'cancel', 4_000);
      expect(Number(await updatedAt([ofA])) - trigger).toBeLessThan(1_000);
      expect((await statesOf(db(), [ofB]))[ofB]).toBe('wait');
    });

    it('the operator lists switches (armed, then fired) and clears one before it fires', async () => {
      const admin = async (...argv: string[]) => {
        let output: unknown;
        const code = await runCli(argv, { db: db(), reference, secretBox, print: (v) => (output = v) });
        return { code, output: output as Array<Record<string, unknown>> | Record<string, unknown> };
      };
      const account = await tradingAccount(db());
      const a = await tradingKey(db(), account.id, server.url);
      const b = await tradingKey(db(), account.id, server.url);
      const ofA = await restingBuy(a.call);
      const ofB = await restingBuy(b.call);
      const armedA = await a.call('/v3/order/cancel-all-after', { timeout: 2 });
      await b.call('/v3/order/cancel-all-after', { timeout: 2 });
      const listed = (await admin('switch', 'list', String(account.id))).output as Array<
        Record<string, unknown>
      >;
      expect(listed.map((row) => [row['api_key'], row['state']]).sort()).toEqual(
        [
          [a.apiKey, 'armed'],
          [b.apiKey, 'armed'],
        ].sort(),
      );
      expect(listed.find((row) => row['api_key'] === a.apiKey)?.['trigger_time']).toBe(
        new Date(Date.parse(armedA.body.trigger_time)).toISOString(),
      );
      const cleared = await admin('switch', 'clear', b.apiKey);
      expect(cleared.output).toMatchObject({ api_key: b.apiKey, state: 'disabled', trigger_time: null });
      await until(async () => (await statesOf(db(), [ofA]))[ofA] === 'cancel', 5_000);
      await sleep(300);
      expect((await statesOf(db(), [ofB]))[ofB]).toBe('wait');
      const after = (await admin('switch', 'list', String(account.id))).output as Array<
        Record<string, unknown>
      >;
      expect(after.find((row) => row['api_key'] === a.apiKey)).toMatchObject({ state: 'fired' });
      expect(after.find((row) => row['api_key'] === b.apiKey)).toMatchObject({ state: 'disabled' });
      await expect(admin('switch', 'clear', 'no-such-key')).rejects.toThrow(/no switch/);
      await expect(admin('switch', 'list', 'nobody@example.com')).rejects.toThrow(/no account/);
    });
  });
}
