/**
 * The crypto wallet: deposit addresses, deposit scanning and crediting, withdrawal requests and
 * their sending, behind the routes of src/src/wallet/{wallets,deposits,withdrawals}.ts. One background loop (every `pollMs`)
 * scans each custodied coin and processes withdrawals; `tick()` runs one round on demand.
 */

import { findAccount } from '../accounts/store.js';
import { background } from '../cluster/background.js';
import type { Custody } from '../custody/custody.js';
import { SandboxCustody } from '../custody/sandbox.js';
import type { Database, Sql } from '../db/database.js';
import { ApiError } from '../errors.js';
import { amountToNumber } from '../money/decimal.js';
import type { ReferenceData } from '../reference/load.js';
import { addressOf, saveAddress } from './address-store.js';
import { silentLog, type WalletContext, type WalletLog } from './context.js';
import { minDeposit, type ScanResult, scanDeposits } from './deposit-scan.js';
import type { WithdrawBody, WithdrawResultItem } from './fiat-port.js';
import { FundsRefused } from './post.js';
import { checkWithdrawal } from './withdraw-request.js';
import { processWithdrawals } from './withdrawal-sender.js';
import {
  createWithdrawal,
  releaseWithdrawal,
  transitionWithdrawal,
  type Withdrawal,
} from './withdrawal-store.js';

/** Sends the confirmation mail of a withdrawal (wired to src/mail/ in app.ts). */
export interface WithdrawalConfirmation {
  /**
   * Issues single-use confirm and cancel links inside `tx` (the transaction creating the request),
   * records their expiry as the request's, and returns it with a function that sends the mail once
   * the transaction committed.
   */
  prepare(
    tx: Sql,
    withdrawal: Withdrawal,
    email: string,
  ): Promise<{ expiresAt: Date; deliver(): Promise<void> }>;
}

/** A crypto destination a restricted withdrawal asks for (the custody's spelling, the memo as sent). */
export interface Destination {
  readonly accountId: number;
  readonly currency: string;
  /** `Custody.canonicalAddress` of the address */
  readonly addressKey: string;
  readonly memo: string | null;
}

/**
 * Decides where a restricted withdrawal (an account with `withdraw_allowlist_only`, or a key with
 * `withdraw_allowlisted`) may go: the withdrawal address book (src/withdraw-addresses/), wired in
 * app.ts. It runs inside the transaction that records the request, so an entry ended concurrently
 * either refuses the request or finds it recorded (and cancels it).
 */
export interface DestinationGuard {
  /** The id of the entry that allows `destination`; throws the ApiError refusing it otherwise. */
  allow(tx: Sql, destination: Destination): Promise<number>;
}

export interface WithdrawOptions {
  /** The key lacks `withdraw` (it has `withdraw_allowlisted`): only address book destinations. */
  readonly keyRestricted?: boolean;
}

export interface WalletOptions {
  readonly db: Database;
  readonly reference: ReferenceData;
  /** The custody of each coin it serves (lower-case code). */
  readonly custodies: ReadonlyMap<string, Custody>;
  /** Confirmations before a deposit is credited, per currency. @default 1 */
  readonly confirmations?: Readonly<Record<string, number>>;
  /** @default 2000 */
  readonly pollMs?: number;
  /** @default 30000 */
  readonly sendLeaseMs?: number;
  /** How long a request waits for its e-mail confirmation when no link expiry is given. @default 3600000 */
  readonly confirmationTtlMs?: number;
  readonly confirmation?: WithdrawalConfirmation;
  readonly failpoint?: string | undefined;
  readonly log?: WalletLog;
  readonly now?: () => number;
}

export interface DepositInfo {
  confirmations: number;
  min_deposit: number;
  address: string | null;
  memo?: string | null;
}

export class Wallet {
  readonly context: WalletContext;
  private readonly options: WalletOptions;
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private closed = false;
  private confirmation: WithdrawalConfirmation | undefined;
  private destinationGuard: DestinationGuard | undefined;

  constructor(options: WalletOptions) {
    this.options = options;
    this.confirmation = options.confirmation;
    const confirmations = options.confirmations ?? {};
    this.context = {
      db: options.db,
      reference: options.reference,
      custodyOf: (currency) => options.custodies.get(currency.toLowerCase()),
      confirmationsFor: (currency) => Math.max(1, confirmations[currency] ?? 1),
      log: options.log ?? silentLog,
      now: options.now ?? Date.now,
    };
  }

  /** Sends confirmation mails through `confirmation` from now on (wired once the app's links exist). */
  useConfirmation(confirmation: WithdrawalConfirmation): void {
    this.confirmation = confirmation;
  }

  /** Restricted withdrawals are decided by `guard` from now on (without one they are all refused). */
  useDestinationGuard(guard: DestinationGuard): void {
    this.destinationGuard = guard;
  }

  /** Logs to `log` from now on (the server's logger exists only after the app is built). */
  useLog(log: WalletLog): void {
    this.context.log = log;
  }

  /** The sandbox custody, when one serves some coin (operator commands use it). */
  get sandbox(): SandboxCustody | undefined {
    for (const custody of this.options.custodies.values())
      if (custody instanceof SandboxCustody) return custody;
    return undefined;
  }

  /** Coins with a custody. */
  get currencies(): string[] {
    return [...this.options.custodies.keys()];
  }

  private coin(code: string): { code: string; hasMemo: boolean; custody: Custody } {
    const currency = this.options.reference.currency(code);
    if (!currency) throw new ApiError('unknown_currency', `unknown currency "${code}"`);
    if (!currency.coin) throw new ApiError('not_a_coin', `${currency.code} is not a cryptocurrency`);
    const custody = this.context.custodyOf(currency.code);
    if (!custody)
      throw new ApiError('custody_unavailable', `${currency.code} deposits and withdrawals are not served`);
    return { code: currency.code, hasMemo: currency.has_memo, custody };
  }

  async depositInfo(accountId: number, code: string): Promise<DepositInfo> {
    const coin = this.coin(code);
    const stored = await addressOf(this.options.db, accountId, coin.code);
    const info: DepositInfo = {
      confirmations: this.context.confirmationsFor(coin.code),
      min_deposit: amountToNumber(
        minDeposit(this.context, coin.code),
        this.options.reference.ledgerPrecision(coin.code),
      ),
      address: stored?.address ?? null,
    };
    if (coin.hasMemo) info.memo = stored?.memo ?? null;
    return info;
  }

  /** Generates the account's address; false when it already has one. */
  async createAddress(accountId: number, code: string): Promise<boolean> {
    const coin = this.coin(code);
    if (await addressOf(this.options.db, accountId, coin.code)) return false;
    const fresh = await this.custodyCall(() => coin.custody.newAddress(coin.code, accountId));
    return saveAddress(this.options.db, accountId, coin.code, fresh.address, fresh.memo, coin.custody.kind);
  }

  /**
   * The custody's spelling of `address` as a destination of coin `code` (`Custody.canonicalAddress`),
   * or undefined when it is not a valid one; unknown currency, fiat and unserved coins are refused.
   */
  async canonicalAddress(code: string, address: string): Promise<string | undefined> {
    const coin = this.coin(code);
    return this.custodyCall(() => coin.custody.canonicalAddress(coin.code, address));
  }

  private async custodyCall<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof ApiError) throw error;
      this.context.log.error({ err: error }, 'custody call failed');
      throw new ApiError(
        'custody_unavailable',
        'the custody of this currency is not reachable; try again later',
      );
    }
  }

  /** A crypto withdrawal request: checked, recorded with its funds locked, confirmation mail sent. */
  async withdraw(
    accountId: number,
    body: WithdrawBody,
    options: WithdrawOptions = {},
  ): Promise<WithdrawResultItem[]> {
    const coin = this.coin(body.withdraw_type);
    const checked = checkWithdrawal(this.options.reference, body);
    const address = body.address?.trim() ?? '';
    if (address === '') throw new ApiError('invalid_address', 'address is required');
    const addressKey = await this.custodyCall(() => coin.custody.canonicalAddress(coin.code, address));
    if (addressKey === undefined) {
      throw new ApiError('invalid_address', `"${address}" is not a valid ${coin.code} address`);
    }
    const account = await findAccount(this.options.db, accountId);
    if (!account) throw new ApiError('not_found', 'account not found');
    const confirm = account.withdrawConfirmation;
    const restricted = options.keyRestricted === true || account.withdrawAllowlistOnly;
    const guard = this.destinationGuard;
    if (restricted && !guard) {
      throw new ApiError('address_not_allowlisted', 'withdrawals are limited to the address book here');
    }
    let deliver: (() => Promise<void>) | undefined;
    let created: Withdrawal;
    try {
      created = await this.options.db.transaction(async (tx) => {
        // Before the funds are locked: a refused destination moves nothing.
        const allowedBy = restricted
          ? await guard!.allow(tx, { accountId, currency: checked.currency, addressKey, memo: checked.memo })
          : null;
        const withdrawal = await createWithdrawal(tx, {
          accountId,
          currency: checked.currency,
          rail: 'crypto',
          destination: address,
          memo: checked.memo,
          amount: checked.amount,
          fee: checked.fee,
          feeCurrency: checked.feeCurrency,
          totalAmount: checked.totalAmount,
          status: confirm ? 'awaiting_confirmation' : 'queued',
          confirmExpiresAt: confirm
            ? new Date(this.context.now() + (this.options.confirmationTtlMs ?? 3_600_000))
            : null,
          withdrawAddressId: allowedBy,
        });
        if (confirm && this.confirmation) {
          deliver = (await this.confirmation.prepare(tx, withdrawal, account.email)).deliver;
        }
        return withdrawal;
      });
    } catch (error) {
      if (error instanceof FundsRefused) {
        throw new ApiError(
          'insufficient_funds',
          'the available balance does not cover the amount and the fee',
        );
      }
      throw error;
    }
    if (deliver) {
      await deliver().catch((error: unknown) =>
        this.context.log.error({ err: error, withdrawal: created.id }, 'confirmation mail not sent'),
      );
    }
    if (!confirm) this.kick();
    return [
      confirm
        ? {
            status: 'awaiting_confirmation',
            message: 'confirm the withdrawal with the link sent to your e-mail',
            withdrawal_id: created.id,
          }
        : { status: 'pending', message: 'withdrawal queued', withdrawal_id: created.id },
    ];
  }

  /** The handler of the 'withdrawal' confirm/cancel links (runs in the link's transaction). */
  async handleLink(
    tx: Sql,
    id: number,
    action: 'confirm' | 'cancel',
  ): Promise<{ ok: boolean; message: string }> {
    if (action === 'confirm') {
      // A request past its confirmation time is expired by the next round, never sent.
      const { rows } = await tx.query<{ expired: boolean }>(
        'SELECT confirm_expires_at <= $2 AS expired FROM withdrawals WHERE id = $1',
        [id, new Date(this.context.now())],
      );
      if (rows[0]?.expired) return { ok: false, message: `withdrawal ${id} has expired` };
      const done = await transitionWithdrawal(tx, id, ['awaiting_confirmation'], 'queued');
      if (done) setImmediate(() => this.kick());
      return done
        ? { ok: true, message: `withdrawal ${id} confirmed; it will be sent shortly` }
        : { ok: false, message: `withdrawal ${id} is no longer waiting for confirmation` };
    }
    const released = await releaseWithdrawal(tx, id, 'canceled', null, ['awaiting_confirmation']);
    return released
      ? { ok: true, message: `withdrawal ${id} canceled; the funds are available again` }
      : { ok: false, message: `withdrawal ${id} is no longer waiting for confirmation` };
  }

  /** Scans one coin (or every custodied coin) once. */
  async scanDeposits(code?: string): Promise<ScanResult> {
    let seen = 0;
    let credited = 0;
    for (const currency of code ? [code] : this.currencies) {
      const result = await scanDeposits(this.context, currency);
      seen += result.seen;
      credited += result.credited;
    }
    return { seen, credited };
  }

  async processWithdrawals(): Promise<void> {
    await processWithdrawals(this.context, {
      sendLeaseMs: this.options.sendLeaseMs ?? 30_000,
      failpoint: this.options.failpoint,
    });
  }

  /** One round of everything; concurrent calls share the round in progress. */
  tick(): Promise<void> {
    if (this.round) return this.round;
    this.round = (async () => {
      for (const currency of this.currencies) {
        await scanDeposits(this.context, currency).catch((error: unknown) =>
          this.context.log.error({ err: error, currency }, 'deposit scan failed'),
        );
      }
      await this.processWithdrawals().catch((error: unknown) =>
        this.context.log.error({ err: error }, 'withdrawal round failed'),
      );
    })().finally(() => {
      this.round = undefined;
    });
    return this.round;
  }

  /** Runs a round soon (a withdrawal was queued). */
  private kick(): void {
    if (this.timer && !this.closed && background.mayRun('wallet')) void this.tick();
  }

  /** Starts the background loop. */
  start(): void {
    const loop = () => {
      if (this.closed) return;
      // In a cluster one node scans and sends at a time (src/cluster/background.ts).
      void (background.mayRun('wallet') ? this.tick() : Promise.resolve()).finally(() => {
        if (!this.closed) this.timer = setTimeout(loop, this.options.pollMs ?? 2_000);
      });
    };
    this.timer = setTimeout(loop, 0);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.round;
    for (const custody of new Set(this.options.custodies.values())) await custody.close();
  }
}
