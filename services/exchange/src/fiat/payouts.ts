import type { FastifyBaseLogger } from 'fastify';
import { background } from '../cluster/background.js';
import type { Sql } from '../db/database.js';
import {
  releaseWithdrawal,
  settleWithdrawal,
  transitionWithdrawal,
  type Withdrawal,
  withdrawalById,
  withdrawalsIn,
} from '../wallet/withdrawal-store.js';
import { gatewayText, ledgerToReal } from './amounts.js';
import { describeFailure } from './client.js';
import type { FiatDeps } from './deps.js';
import type { Payout } from './gateway-types.js';
import { openDetails } from './withdrawals.js';

export interface PayoutDispatcherOptions {
  /** How often queued requests are looked for, in ms. @default 2000 */
  readonly pollMs?: number;
  /** A request left `sending` (no answer, or no callback yet) is sent again after this many ms. @default 10000 */
  readonly resendAfterMs?: number;
  readonly log?: FastifyBaseLogger;
  /**
   * Test-only fail point (`EXCHANGE_FAILPOINT`): `fiat-payout-after-send` kills the process with
   * SIGKILL after the gateway accepted a payout and before the answer is recorded.
   */
  readonly failpoint?: string | undefined;
}

/**
 * Sends queued fiat withdrawals to the gateway as payouts. The intent is recorded first: a request
 * is moved `queued -> sending` and committed before the call, so a crash after it leaves a
 * `sending` request that is sent again later. Sending again never pays twice: the gateway makes
 * payouts idempotent per `reference_id` (the withdrawal id) and answers the existing payout. The
 * same resend is the reconciliation of a lost answer or a lost callback: a payout that already
 * ended is settled or released from that answer.
 */
export class PayoutDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly pollMs: number;
  private readonly resendAfterMs: number;

  constructor(
    private readonly deps: FiatDeps,
    private readonly options: PayoutDispatcherOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 2000;
    this.resendAfterMs = options.resendAfterMs ?? 10_000;
  }

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  /**
   * Runs a round now (a request was just queued); rounds never overlap. In a cluster only the node
   * holding the `fiat-payouts` job does (src/cluster/background.ts); another node's request waits for
   * that node's next poll (`pollMs`).
   */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (!background.mayRun('fiat-payouts')) return;
    this.running = this.round().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      // In a cluster one node dispatches at a time: kick() asks the gate (src/cluster/background.ts).
      this.kick();
      this.schedule();
    }, this.pollMs);
    this.timer.unref();
  }

  /**
   * One round: releases requests whose e-mail confirmation expired, claims and sends every queued
   * request, then resends the stale `sending` ones.
   */
  async round(): Promise<void> {
    try {
      const now = this.deps.now();
      for (const waiting of await withdrawalsIn(this.deps.db, 'fiat', ['awaiting_confirmation'])) {
        if (waiting.confirmExpiresAt && waiting.confirmExpiresAt.getTime() <= now) {
          await this.deps.db.transaction((tx) =>
            releaseWithdrawal(tx, waiting.id, 'expired', null, ['awaiting_confirmation']),
          );
          await forgetDetails(this.deps.db, waiting.id);
        }
      }
      for (const queued of await withdrawalsIn(this.deps.db, 'fiat', ['queued'])) {
        if (this.stopped) return;
        const claimed = await this.deps.db.transaction((tx) =>
          transitionWithdrawal(tx, queued.id, ['queued'], 'sending'),
        );
        if (claimed) await this.send(claimed);
      }
      for (const id of await this.staleSending()) {
        if (this.stopped) return;
        const withdrawal = await withdrawalById(this.deps.db, id);
        if (withdrawal?.status === 'sending') await this.send(withdrawal);
      }
      // The card numbers of ended requests (also those canceled through the wallet's link) are not kept.
      await this.deps.db.query(
        `UPDATE withdrawals SET details_box = NULL
          WHERE rail = 'fiat' AND details_box IS NOT NULL AND status IN ('done', 'failed', 'expired', 'canceled')`,
      );
    } catch (error) {
      this.options.log?.error({ err: error }, 'fiat payout round failed');
    }
  }

  private async staleSending(): Promise<number[]> {
    const { rows } = await this.deps.db.query<{ id: number }>(
      `SELECT id FROM withdrawals WHERE rail = 'fiat' AND status = 'sending'
          AND updated_at < now() - make_interval(secs => $1::double precision / 1000) ORDER BY id LIMIT 100`,
      [this.resendAfterMs],
    );
    return rows.map((row) => row.id);
  }

  /** Sends (or sends again) one payout and applies what the gateway answered. */
  async send(withdrawal: Withdrawal): Promise<void> {
    const currency = this.deps.reference.currency(withdrawal.currency);
    if (!currency || !withdrawal.provider || !withdrawal.detailsBox) {
      await this.deps.db.transaction((tx) =>
        releaseWithdrawal(tx, withdrawal.id, 'failed', 'the payout details are missing', ['sending']),
      );
      return;
    }
    const fields = openDetails(this.deps.auth.secretBox, withdrawal.accountId, withdrawal.detailsBox);
    const answer = await this.deps.gateway.createPayout({
      reference_id: String(withdrawal.id),
      service: withdrawal.provider,
      currency: currency.code.toUpperCase(),
      amount: gatewayText(currency, ledgerToReal(this.deps.reference, currency, withdrawal.amount)),
      fields,
    });
    if (answer.ok) {
      if (this.options.failpoint === 'fiat-payout-after-send') process.kill(process.pid, 'SIGKILL');
      const applied = await this.deps.db.transaction((tx) =>
        applyPayoutState(tx, withdrawal.id, answer.value),
      );
      if (applied === 'conflict') {
        this.options.log?.error(
          { withdrawal: withdrawal.id, payout: answer.value },
          'payout contradicts the withdrawal',
        );
      }
      return;
    }
    const { failure } = answer;
    // 400/404/422: the gateway refused the payout itself (fields, limits, service). 401/403/409 and 5xx
    // mean a configuration or gateway problem that does not decide the payout: it is sent again later.
    if (failure.kind === 'refused' && [400, 404, 422].includes(failure.status)) {
      // It will never be paid: give the funds back.
      await this.deps.db.transaction((tx) =>
        releaseWithdrawal(tx, withdrawal.id, 'failed', `refused by the gateway: ${failure.message}`, [
          'sending',
        ]),
      );
      await forgetDetails(this.deps.db, withdrawal.id);
      return;
    }
    // No usable answer: the outcome is unknown, so the request stays `sending` and is sent again later.
    this.options.log?.warn(
      { withdrawal: withdrawal.id, reason: describeFailure(failure) },
      'fiat payout not sent yet',
    );
    await this.deps.db.query(
      `UPDATE withdrawals SET updated_at = now() WHERE id = $1 AND status = 'sending'`,
      [withdrawal.id],
    );
  }
}

/** The payout's card number is not kept once the payout has ended. */
async function forgetDetails(db: Sql, id: number): Promise<void> {
  await db.query(
    `UPDATE withdrawals SET details_box = NULL WHERE id = $1 AND status IN ('done', 'failed', 'expired', 'canceled')`,
    [id],
  );
}

/**
 * Applies a payout state the gateway reported (an answer or a callback) to its withdrawal. `conflict`:
 * the withdrawal already ended the other way (released but paid, or paid but failed), which needs an
 * operator; nothing is moved.
 */
export async function applyPayoutState(
  tx: Sql,
  withdrawalId: number,
  payout: Pick<Payout, 'id' | 'status' | 'failure_reason'>,
): Promise<'settled' | 'released' | 'recorded' | 'conflict'> {
  const ended = async (expected: string) => {
    const { rows } = await tx.query<{ status: string }>('SELECT status FROM withdrawals WHERE id = $1', [
      withdrawalId,
    ]);
    return rows[0]?.status === expected;
  };
  switch (payout.status) {
    case 'success':
      if (!(await settleWithdrawal(tx, withdrawalId, String(payout.id), true)) && !(await ended('done'))) {
        return 'conflict';
      }
      await forgetDetails(tx, withdrawalId);
      return 'settled';
    case 'failed': {
      const released = await releaseWithdrawal(
        tx,
        withdrawalId,
        'failed',
        payout.failure_reason ?? 'the payout failed',
        ['queued', 'sending'],
      );
      if (!released && !(await ended('failed'))) return 'conflict';
      await forgetDetails(tx, withdrawalId);
      return 'released';
    }
    default:
      await tx.query(
        `UPDATE withdrawals SET external_id = $2, updated_at = now() WHERE id = $1 AND status = 'sending'`,
        [withdrawalId, String(payout.id)],
      );
      return 'recorded';
  }
}
