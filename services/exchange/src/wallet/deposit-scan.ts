/**
 * One scan of a currency's incoming transfers: new outputs paying one of our addresses are recorded
 * (once per currency, txid and output), the pending ones are re-checked and credited when deep
 * enough, and those that left the chain are marked orphaned (never credited). Safe to run from
 * several processes at once: recording is an upsert and crediting is exactly once (deposit-store.ts).
 */
import { parseAmount } from '../money/decimal.js';
import { addressOwner, loadCursor, saveCursor } from './address-store.js';
import type { WalletContext } from './context.js';
import {
  creditDeposit,
  pendingCryptoDeposits,
  recordSeenTransfer,
  updateConfirmations,
} from './deposit-store.js';

/** Minimum deposit of a coin in ledger minor units (0 when the reference data names none). */
export function minDeposit(ctx: Pick<WalletContext, 'reference'>, currency: string): bigint {
  const fee = ctx.reference.fees.find((f) => f.code === currency && f.category === 'coin');
  if (!fee || !('min_deposit' in fee)) return 0n;
  const parsed = parseAmount(String(fee.min_deposit.amount), ctx.reference.ledgerPrecision(currency));
  return parsed.ok ? parsed.value : 0n;
}

export interface ScanResult {
  readonly seen: number;
  readonly credited: number;
}

export async function scanDeposits(ctx: WalletContext, currency: string): Promise<ScanResult> {
  const custody = ctx.custodyOf(currency);
  const published = ctx.reference.currency(currency);
  if (!custody || !published) return { seen: 0, credited: 0 };
  const need = ctx.confirmationsFor(currency);
  const precision = ctx.reference.ledgerPrecision(currency);
  const minimum = minDeposit(ctx, currency);
  const page = await custody.incoming(currency, await loadCursor(ctx.db, currency), need);
  let seen = 0;
  for (const transfer of page.transfers) {
    const owner = await addressOwner(ctx.db, currency, transfer.address, transfer.memo, published.has_memo);
    if (owner === undefined) continue;
    const amount = parseAmount(transfer.amount, precision);
    if (!amount.ok || amount.value <= 0n) {
      ctx.log.warn(
        { currency, txid: transfer.txid, amount: transfer.amount },
        'deposit amount not representable; skipped',
      );
      continue;
    }
    await recordSeenTransfer(ctx.db, {
      accountId: owner,
      currency,
      amount: amount.value,
      address: transfer.address,
      memo: published.has_memo ? transfer.memo : null,
      txid: transfer.txid,
      outputIndex: transfer.output,
      confirmations: transfer.confirmations,
      belowMinimum: amount.value < minimum,
    });
    seen += 1;
  }
  await saveCursor(ctx.db, currency, page.cursor);
  let credited = 0;
  for (const deposit of await pendingCryptoDeposits(ctx.db, currency)) {
    const confirmations = await custody.confirmations(currency, deposit.txid!);
    if (confirmations === 'gone' || confirmations < 0) {
      await updateConfirmations(ctx.db, deposit.id, 'gone');
      ctx.log.warn(
        { currency, txid: deposit.txid, deposit: deposit.id },
        'deposit left the chain before it was credited',
      );
      continue;
    }
    if (confirmations !== deposit.confirmations) await updateConfirmations(ctx.db, deposit.id, confirmations);
    if (confirmations >= need && (await creditDeposit(ctx.db, deposit.id)) === 'credited') {
      credited += 1;
      ctx.log.info({ currency, deposit: deposit.id, account: deposit.accountId }, 'deposit credited');
    }
  }
  return { seen, credited };
}
