/**
 * The sandbox custody: a simulated chain kept in the database (`sandbox_transfers`), so the server
 * and the operator tool see the same one and it survives restarts. Deposits arrive and confirm
 * through operator commands (`deposit simulate`, `deposit confirm`); withdrawals complete on their
 * own `withdrawalDelayMs` after they are sent, with a generated txid. Addresses are random, in each
 * currency's real format (src/custody/addresses.ts).
 */
import { randomInt } from 'node:crypto';
import type { Sql } from '../db/database.js';
import { canonicalAddress, generateAddress, generateTxid, isValidAddress, usesMemo } from './addresses.js';
import {
  type Custody,
  CustodyRefusal,
  type DepositAddress,
  type IncomingPage,
  type OutgoingTransfer,
} from './custody.js';

export interface SandboxOptions {
  readonly db: Sql;
  /** How long a sent withdrawal takes to complete. @default 3000 */
  readonly withdrawalDelayMs?: number;
  /** Milliseconds since the epoch. @default Date.now */
  readonly now?: () => number;
}

const DECIMAL = /^\d+(\.\d+)?$/;

export class SandboxCustody implements Custody {
  readonly kind = 'sandbox' as const;
  private readonly db: Sql;
  private readonly delayMs: number;
  private readonly now: () => number;

  constructor(options: SandboxOptions) {
    this.db = options.db;
    this.delayMs = options.withdrawalDelayMs ?? 3_000;
    this.now = options.now ?? Date.now;
  }

  async newAddress(currency: string): Promise<DepositAddress> {
    // xrp: the shared hot-wallet address with a random destination tag (uint32, never 0); the
    // caller's unique index on (currency, address, memo) catches the rare repeat.
    return {
      address: generateAddress(currency),
      memo: usesMemo(currency) ? String(randomInt(1, 2 ** 32 - 1)) : null,
    };
  }

  async validateAddress(currency: string, address: string): Promise<boolean> {
    return isValidAddress(currency, address);
  }

  async canonicalAddress(currency: string, address: string): Promise<string | undefined> {
    return canonicalAddress(currency, address);
  }

  async incoming(currency: string, cursor: string | null): Promise<IncomingPage> {
    const after = cursor && /^\d+$/.test(cursor) ? cursor : '0';
    const { rows } = await this.db.query<{
      seq: number | string;
      txid: string;
      address: string;
      memo: string | null;
      amount: string;
      confirmations: number;
    }>(
      `SELECT seq, txid, address, memo, amount::text AS amount, confirmations FROM sandbox_transfers
        WHERE direction = 'in' AND currency = $1 AND seq > $2 ORDER BY seq LIMIT 1000`,
      [currency, after],
    );
    const last = rows.at(-1);
    return {
      transfers: rows.map((row) => ({
        txid: row.txid,
        output: 0,
        address: row.address,
        memo: row.memo,
        amount: row.amount,
        confirmations: row.confirmations,
      })),
      cursor: last ? String(last.seq) : after,
    };
  }

  async confirmations(currency: string, txid: string): Promise<number | 'gone'> {
    const { rows } = await this.db.query<{
      direction: string;
      confirmations: number;
      completes_at: Date | null;
    }>(
      'SELECT direction, confirmations, completes_at FROM sandbox_transfers WHERE currency = $1 AND txid = $2',
      [currency, txid],
    );
    const row = rows[0];
    if (!row) return 'gone';
    if (row.direction === 'in') return row.confirmations;
    return row.completes_at && new Date(row.completes_at).getTime() <= this.now() ? 1 : 0;
  }

  async send(currency: string, transfer: OutgoingTransfer): Promise<string> {
    if (!isValidAddress(currency, transfer.address)) throw new CustodyRefusal('invalid address');
    if (!DECIMAL.test(transfer.amount)) throw new CustodyRefusal('invalid amount');
    // One transfer per tag: sending the same tag again answers the first transfer's txid.
    await this.db.query(
      `INSERT INTO sandbox_transfers (txid, currency, direction, address, memo, amount, tag, completes_at)
       VALUES ($1, $2, 'out', $3, $4, $5, $6, $7) ON CONFLICT (tag) DO NOTHING`,
      [
        generateTxid(currency),
        currency,
        transfer.address,
        transfer.memo,
        transfer.amount,
        transfer.tag,
        new Date(this.now() + this.delayMs),
      ],
    );
    const txid = await this.findSent(currency, transfer.tag);
    if (!txid) throw new Error(`sandbox: transfer ${transfer.tag} vanished`);
    return txid;
  }

  async findSent(_currency: string, tag: string): Promise<string | undefined> {
    const { rows } = await this.db.query<{ txid: string }>(
      'SELECT txid FROM sandbox_transfers WHERE tag = $1',
      [tag],
    );
    return rows[0]?.txid;
  }

  /** Operator: an incoming transfer to `address` (and memo) appears with `confirmations`. */
  async simulateDeposit(
    currency: string,
    address: string,
    amount: string,
    memo: string | null,
    confirmations: number,
  ): Promise<string> {
    if (!DECIMAL.test(amount) || /^0+(\.0+)?$/.test(amount))
      throw new CustodyRefusal(`amount "${amount}" is not a positive decimal`);
    const txid = generateTxid(currency);
    await this.db.query(
      `INSERT INTO sandbox_transfers (txid, currency, direction, address, memo, amount, confirmations)
       VALUES ($1, $2, 'in', $3, $4, $5, $6)`,
      [txid, currency, address, memo, amount, confirmations],
    );
    return txid;
  }

  /** Operator: sets the confirmations of an incoming transfer; returns its currency, or undefined. */
  async confirmDeposit(txid: string, confirmations: number): Promise<string | undefined> {
    const { rows } = await this.db.query<{ currency: string }>(
      `UPDATE sandbox_transfers SET confirmations = $2 WHERE txid = $1 AND direction = 'in' RETURNING currency`,
      [txid, confirmations],
    );
    return rows[0]?.currency;
  }

  async close(): Promise<void> {}
}
