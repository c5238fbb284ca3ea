/**
 * Sends crypto withdrawals exactly once. The intent is durable before the custody is called: the
 * request moves queued -> sending (committed), then the custody sends it with the request's tag,
 * then the txid and the ledger settlement commit together (sending -> sent). A crash between the
 * send and that commit leaves the request `sending`; the next round finds the transfer again by its
 * tag (`findSent`) instead of sending a second one. A `sending` request is taken up again only after
 * `sendLeaseMs` without change, so a second process never races a send still in progress; and the
 * holder renews that lease by its stamp right before it calls the custody, so a holder that stalled
 * past the lease (SIGSTOP, a cut network, a long pause) and was replaced sends nothing when it wakes.
 */

import { CustodyRefusal } from '../custody/custody.js';
import { formatAmount } from '../money/decimal.js';
import type { WalletContext } from './context.js';
import {
  releaseWithdrawal,
  renewSend,
  sendStamp,
  settleWithdrawal,
  takeStaleSend,
  transitionWithdrawal,
  type Withdrawal,
  withdrawalsIn,
} from './withdrawal-store.js';

export interface SenderOptions {
  /** A `sending` request untouched this long is taken up again (found by tag or sent). */
  readonly sendLeaseMs: number;
  /**
   * Test-only fail point (`EXCHANGE_FAILPOINT`): `withdrawal-after-send` kills the process with
   * SIGKILL right after the custody accepted a send, before its commit.
   */
  readonly failpoint?: string | undefined;
}

async function settle(ctx: WalletContext, w: Withdrawal, txid: string): Promise<void> {
  await ctx.db.transaction((tx) => settleWithdrawal(tx, w.id, txid));
  ctx.log.info({ withdrawal: w.id, currency: w.currency, txid }, 'withdrawal sent');
}

/** Sends (or finds again) one claimed withdrawal; `stamp` is the send lease this process took. */
async function send(
  ctx: WalletContext,
  w: Withdrawal,
  stamp: string,
  recovering: boolean,
  options: SenderOptions,
): Promise<void> {
  const custody = ctx.custodyOf(w.currency);
  if (!custody) return;
  if (recovering) {
    const found = await custody.findSent(w.currency, w.tag);
    if (found) {
      ctx.log.warn(
        { withdrawal: w.id, txid: found },
        'found a withdrawal sent before a crash; not sending it again',
      );
      await settle(ctx, w, found);
      return;
    }
  }
  // The last statement before the custody's call: the lease must still be this process's.
  if ((await renewSend(ctx.db, w.id, stamp)) === undefined) {
    ctx.log.warn(
      { withdrawal: w.id },
      'another process took this withdrawal up while this one stalled; not sending it',
    );
    return;
  }
  let txid: string;
  try {
    txid = await custody.send(w.currency, {
      address: w.destination,
      memo: w.memo,
      amount: formatAmount(w.amount, ctx.reference.ledgerPrecision(w.currency)),
      tag: w.tag,
    });
  } catch (error) {
    if (error instanceof CustodyRefusal) {
      await ctx.db.transaction((tx) => releaseWithdrawal(tx, w.id, 'failed', error.message, ['sending']));
      ctx.log.warn(
        { withdrawal: w.id, reason: error.message },
        'withdrawal refused by the custody; funds released',
      );
      return;
    }
    // The outcome is unknown (timeout, lost connection): it stays `sending` and is found by its tag later.
    ctx.log.error({ withdrawal: w.id, err: error }, 'withdrawal send failed; will look for it again');
    return;
  }
  if (options.failpoint === 'withdrawal-after-send') process.kill(process.pid, 'SIGKILL');
  await settle(ctx, w, txid);
}

/** One round: expire unconfirmed requests, send queued ones, take up stale sends, complete sent ones. */
export async function processWithdrawals(ctx: WalletContext, options: SenderOptions): Promise<void> {
  const now = ctx.now();
  for (const w of await withdrawalsIn(ctx.db, 'crypto', ['awaiting_confirmation'])) {
    if (w.confirmExpiresAt && w.confirmExpiresAt.getTime() <= now) {
      const expired = await ctx.db.transaction((tx) =>
        releaseWithdrawal(tx, w.id, 'expired', null, ['awaiting_confirmation']),
      );
      if (expired) ctx.log.info({ withdrawal: w.id }, 'unconfirmed withdrawal expired; funds released');
    }
  }
  for (const w of await withdrawalsIn(ctx.db, 'crypto', ['sending'])) {
    if (!ctx.custodyOf(w.currency)) continue;
    // Take the lease: only one process gets the row back from a stale `sending`.
    const stamp = await takeStaleSend(ctx.db, w.id, options.sendLeaseMs);
    if (stamp !== undefined) await send(ctx, w, stamp, true, options);
  }
  for (const w of await withdrawalsIn(ctx.db, 'crypto', ['queued'])) {
    if (!ctx.custodyOf(w.currency)) continue;
    const claim = await ctx.db.transaction(async (tx) => {
      const claimed = await transitionWithdrawal(tx, w.id, ['queued'], 'sending');
      const stamp = claimed ? await sendStamp(tx, w.id) : undefined;
      return claimed && stamp !== undefined ? { claimed, stamp } : undefined;
    });
    if (claim) await send(ctx, claim.claimed, claim.stamp, false, options);
  }
  for (const w of await withdrawalsIn(ctx.db, 'crypto', ['sent'])) {
    const custody = ctx.custodyOf(w.currency);
    if (!custody || !w.externalId) continue;
    const confirmations = await custody.confirmations(w.currency, w.externalId);
    if (confirmations !== 'gone' && confirmations >= 1) {
      await ctx.db.transaction((tx) => transitionWithdrawal(tx, w.id, ['sent'], 'done'));
    }
  }
}
