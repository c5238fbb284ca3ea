/**
 * Operator commands of the sandbox custody (`deposit simulate`, `deposit confirm`) and the loopback
 * endpoint through which the operator tool reaches a running server. The embedded database (PGlite)
 * admits one process per directory, so while `npm start` runs, the tool cannot open it: the server
 * listens on 127.0.0.1 (a port of its own, never the public listener) and writes
 * `<DATA_DIR>/operator.json` (`{port, token, pid}`, mode 0600) at start; the tool sends the command
 * there with the token, and the server runs it and answers what the tool would have printed.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { currentHolder, holderAlive } from '@platform/sql-storage/process-lock';
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

export interface OperatorAnswer {
  readonly code: number;
  readonly output?: unknown;
  readonly error?: string;
}

export const OPERATOR_FILE = 'operator.json';

export interface OperatorEndpoint {
  readonly port: number;
  close(): Promise<void>;
}

/** Starts the loopback endpoint and writes `<dataDir>/operator.json` (mode 0600). */
export async function startOperatorEndpoint(
  dataDir: string,
  run: (argv: string[]) => Promise<OperatorAnswer>,
): Promise<OperatorEndpoint> {
  const token = randomBytes(32).toString('hex');
  const expected = Buffer.from(`Bearer ${token}`);
  const server = createServer((request, response) => {
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
    };
    const presented = Buffer.from(request.headers.authorization ?? '');
    if (
      request.method !== 'POST' ||
      request.url !== '/operator/command' ||
      presented.length !== expected.length ||
      !timingSafeEqual(presented, expected)
    ) {
      answer(403, { code: 2, error: 'forbidden' });
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let argv: unknown;
      try {
        argv = JSON.parse(Buffer.concat(chunks).toString('utf8')).argv;
      } catch {
        argv = undefined;
      }
      if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) {
        answer(400, { code: 2, error: 'expected {"argv": [strings]}' });
        return;
      }
      run(argv).then(
        (result) => answer(200, result),
        () => answer(500, { code: 1, error: 'the command failed; see the server log' }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const file = path.join(dataDir, OPERATOR_FILE);
  // Removed first: `mode` applies only to a file being created (one left by a crash may differ).
  rmSync(file, { force: true });
  writeFileSync(file, JSON.stringify({ port, token, ...currentHolder() }), { mode: 0o600, flag: 'wx' });
  return {
    port,
    async close() {
      rmSync(file, { force: true });
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** True when a running server wrote the operator file of `dataDir` (a stale file is ignored). */
export function serverRunsIn(dataDir: string): boolean {
  try {
    const { pid, start } = JSON.parse(readFileSync(path.join(dataDir, OPERATOR_FILE), 'utf8')) as {
      pid: number;
      start?: string;
    };
    // A crashed server's file (its process dead, a zombie, or its pid reused) is not a running server.
    return typeof pid === 'number' && pid !== process.pid && holderAlive({ pid, start });
  } catch {
    return false;
  }
}

/** Sends a command to the running server of `dataDir`; undefined when no server endpoint is there. */
export async function forwardToServer(
  dataDir: string,
  argv: readonly string[],
): Promise<OperatorAnswer | undefined> {
  let target: { port: number; token: string };
  try {
    target = JSON.parse(readFileSync(path.join(dataDir, OPERATOR_FILE), 'utf8'));
  } catch {
    return undefined;
  }
  const response = await fetch(`http://127.0.0.1:${target.port}/operator/command`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.token}` },
    body: JSON.stringify({ argv }),
    signal: AbortSignal.timeout(60_000),
  });
  return (await response.json()) as OperatorAnswer;
}
