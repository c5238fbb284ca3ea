/**
 * Operator commands of the sandbox custody (`deposit simulate`, `deposit confirm`). While a server
 * holds the embedded database they run in it, as every operator command does (src/cli/).
 */
import type { Sql } from '../db/database.js';
import { parseAmount } from '../money/decimal.js';
import type { ReferenceData } from '../reference/load.js';
import { addressOwner } from './address-store.js';
import type { Wallet } from './wallet.js';

/** A refusal to show the operator (exit code 2). */
export class OperatorError extends Error {}

export interface DepositCommandContext {
  readonly db: Sql;
  readonly reference: ReferenceData;
  readonly wallet: Wallet;
}

async function depositView(ctx: DepositCommandContext, currency: string, txid: string) {
  const { rows } = await ctx.db.query<{
    id: number;
    status: string;
    confirmations: number | null;
    account_id: number;
  }>(
    'SELECT id, status, confirmations, account_id FROM deposits WHERE currency = $1 AND txid = $2 ORDER BY output_index',
    [currency, txid],
  );
  const row = rows[0];
  return {
    txid,
    currency,
    confirmationsNeeded: ctx.wallet.context.confirmationsFor(currency),
    deposit: row
      ? { id: row.id, account: row.account_id, status: row.status, confirmations: row.confirmations }
      : null,
  };
}

function confirmationsOption(raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,6}$/.test(raw)) throw new OperatorError('--confirmations takes a whole number');
  return Number(raw);
}

/**
 * `deposit simulate <currency> <address> <amount> [--memo m] [--confirmations n]` and
 * `deposit confirm <txid> --confirmations n`; returns what to print.
 */
export async function depositCommand(
  ctx: DepositCommandContext,
  args: readonly string[],
  options: { memo?: string | undefined; confirmations?: string | undefined },
): Promise<unknown> {
  const [sub, ...rest] = args;
  const sandbox = ctx.wallet.sandbox;
  if (sub === 'simulate') {
    const [code = '', address = '', amountText = ''] = rest;
    const currency = ctx.reference.currency(code);
    if (!currency?.coin) throw new OperatorError(`unknown coin "${code}"`);
    const custody = ctx.wallet.context.custodyOf(currency.code);
    if (!sandbox || custody !== sandbox) {
      throw new OperatorError(
        `${currency.code} is not served by the sandbox custody; send real coins to the address`,
      );
    }
    if (!address)
      throw new OperatorError(
        'usage: deposit simulate <currency> <address> <amount> [--memo m] [--confirmations n]',
      );
    const parsed = parseAmount(amountText, currency.precision.real);
    if (!parsed.ok || parsed.value <= 0n) {
      throw new OperatorError(
        `amount "${amountText}" must be a positive decimal with at most ${currency.precision.real} decimals`,
      );
    }
    const memo = options.memo ?? null;
    const owner = await addressOwner(ctx.db, currency.code, address, memo, currency.has_memo);
    if (owner === undefined) {
      throw new OperatorError(
        `no account has the ${currency.code} deposit address ${address}${currency.has_memo ? ` with memo ${memo ?? '(none)'}` : ''}`,
      );
    }
    const txid = await sandbox.simulateDeposit(
      currency.code,
      address,
      amountText.trim(),
      memo,
      confirmationsOption(options.confirmations, 0),
    );
    await ctx.wallet.scanDeposits(currency.code);
    return depositView(ctx, currency.code, txid);
  }
  if (sub === 'confirm') {
    const [txid = ''] = rest;
    if (!txid || options.confirmations === undefined) {
      throw new OperatorError('usage: deposit confirm <txid> --confirmations <n>');
    }
    if (!sandbox) throw new OperatorError('no coin is served by the sandbox custody');
    const currency = await sandbox.confirmDeposit(txid, confirmationsOption(options.confirmations, 0));
    if (!currency) throw new OperatorError(`no simulated deposit with txid ${txid}`);
    await ctx.wallet.scanDeposits(currency);
    return depositView(ctx, currency, txid);
  }
  throw new OperatorError('usage: deposit simulate|confirm ...');
}
