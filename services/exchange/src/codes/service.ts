import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SecretBox } from '../crypto/secret-box.js';
import { randomToken } from '../crypto/tokens.js';
import { type Database, type Sql, sqlState } from '../db/database.js';
import { transfer } from '../ledger/entry.js';
import { FundsRefused, postInTransaction } from '../wallet/post.js';
import { releaseAttempt, reserveAttempt } from './failures.js';
import { checkCode, generateCode } from './format.js';
import type { FailureLimits } from './limits.js';
import { type CodeAction, type CodeStatus, type RedeemRefusal, redeemRefusal, transition } from './rules.js';
import {
  changeStatus,
  escrowAccountId,
  insertCode,
  lockCodeByHash,
  lockCodeById,
  type StoredCode,
  svcidExists,
  userAccount,
} from './store.js';
import { codeBoxAssociated } from './view.js';

/** Purpose of the key (SecretBox.deriveKey) of the keyed hash that finds a code. */
const HASH_PURPOSE = 'svc_code lookup';

export type CodeError =
  | RedeemRefusal
  | 'invalid'
  | 'too_many_failures'
  | 'insufficient_funds'
  | 'unknown_recipient'
  | 'mail_failed'
  | 'state';

export type CodeFailure = {
  readonly ok: false;
  readonly error: CodeError;
  readonly detail: string;
  /** With too_many_failures: how long to wait. */
  readonly retryAfterMs?: number;
};
export type CodeOutcome = { readonly ok: true; readonly code: StoredCode } | CodeFailure;

export interface NewCodeInput {
  readonly amount: bigint;
  /** Lower-case currency code, known to the ledger. */
  readonly currency: string;
  /** svcid of the only account allowed to redeem, or `all`. */
  readonly recipient: string;
  /** ms; defaults to the creation time (the owner may take it back at once). */
  readonly nonRefundableBefore?: number;
  readonly comment: string;
  readonly privateComment: string;
}

/**
 * E-mail confirmation of new codes of owners with withdraw_confirmation on (confirmation.ts):
 * `issue` runs in the creating transaction (the links exist exactly when the code does), `send`
 * after it committed, with what `issue` returned.
 */
export interface ConfirmationRequest {
  issue(tx: Sql, code: StoredCode): Promise<unknown>;
  send(code: StoredCode, to: string, issued: unknown): Promise<void>;
}

export interface TransferCodesOptions {
  readonly db: Database;
  readonly secretBox: SecretBox;
  readonly limits: FailureLimits;
  /** ms since the epoch */
  readonly now: () => number;
  readonly requestConfirmation?: ConfirmationRequest;
}

/** Thrown inside a transaction to roll it back with a domain refusal as the outcome. */
class Refusal extends Error {
  constructor(readonly failure: CodeFailure) {
    super(failure.detail);
  }
}

const fail = (error: CodeError, detail: string, retryAfterMs?: number): CodeFailure => ({
  ok: false,
  error,
  detail,
  ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
});

const REFUSAL_DETAIL: Record<RedeemRefusal, string> = {
  not_found: 'no such transfer code',
  currency_mismatch: 'the currency of the code does not match its suffix',
  already_redeemed: 'this transfer code has already been redeemed',
  canceled: 'this transfer code was cancelled',
  on_hold: 'this transfer code is on hold; contact support',
  unconfirmed: 'this transfer code is waiting for its owner to confirm it by e-mail',
  not_refundable_yet: 'the owner may take this code back only after its non_refundable_before time',
  wrong_recipient: 'this transfer code is meant for another account',
};

/** Deadlocks (40P01) and serialisation failures (40001) changed nothing: the transaction runs again. */
async function retried<T>(run: () => Promise<T>, attempts = 8): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run();
    } catch (error) {
      const state = sqlState(error);
      if ((state !== '40P01' && state !== '40001') || attempt >= attempts) throw error;
      await sleep(Math.random() * 10 * attempt);
    }
  }
}

/** A balance guard refused the posting (src/ledger/store.ts): SVC01, or the table CHECK as backstop. */
function isInsufficientFunds(error: unknown): boolean {
  if (error instanceof FundsRefused) return true;
  const state = sqlState(error);
  const constraint = (error as { constraint?: string } | undefined)?.constraint;
  return state === 'SVC01' || (state === '23514' && constraint === 'balances_check');
}

/**
 * Transfer codes: creation into escrow, redemption, operator actions. Every change of a code's status
 * and the money it moves commit in one transaction, and each movement is a ledger entry with an
 * idempotency key (`svc_code:<create|redeem|cancel>:<id>`), so it can never be applied twice.
 */
export class TransferCodes {
  #escrowId: number | undefined;
  readonly #lookupKey: Buffer;

  constructor(private readonly options: TransferCodesOptions) {
    this.#lookupKey = options.secretBox.deriveKey(HASH_PURPOSE);
  }

  /** The keyed hash a code is found by: HMAC-SHA256 of its 45-character body, hex. */
  hashOf(body: string): string {
    return createHmac('sha256', this.#lookupKey).update(body, 'utf8').digest('hex');
  }

  /**
   * Id of the escrow account, looked up once. Inside a transaction pass it as `sql`: PGlite runs one
   * transaction at a time, so a query on the database from inside one would wait for itself.
   */
  async escrowId(sql: Sql = this.options.db): Promise<number> {
    this.#escrowId ??= await escrowAccountId(sql);
    return this.#escrowId;
  }

  /** Creates a code and moves its amount from the owner's available balance into escrow. */
  async create(ownerId: number, input: NewCodeInput): Promise<CodeOutcome> {
    const { db, secretBox } = this.options;
    if (input.recipient !== 'all' && !(await svcidExists(db, input.recipient))) {
      return fail('unknown_recipient', `no account has the svcid "${input.recipient}"`);
    }
    const owner = await userAccount(db, ownerId);
    if (!owner) return fail('not_found', 'the account of this API key no longer exists');
    const escrow = await this.escrowId();
    for (let attempt = 1; ; attempt += 1) {
      const now = this.options.now();
      const { code, parsed } = generateCode(input.currency);
      const status: CodeStatus = owner.withdrawConfirmation ? 'unconfirmed' : 'active';
      const confirmation = status === 'unconfirmed' ? this.options.requestConfirmation : undefined;
      let issued: unknown;
      try {
        const created = await retried(() =>
          db.transaction(async (tx) => {
            const row = await insertCode(tx, {
              sn: `SC${randomToken(12).toUpperCase()}`,
              ownerId,
              publicSegment: parsed.publicSegment,
              codeHash: this.hashOf(parsed.body),
              codeBox: secretBox.seal(code, codeBoxAssociated(parsed.publicSegment)),
              recipient: input.recipient,
              currency: input.currency,
              amount: input.amount,
              status,
              nonRefundableBefore: input.nonRefundableBefore ?? now,
              now,
              comment: input.comment,
              privateComment: input.privateComment,
            });
            await this.move(tx, row, ownerId, escrow, 'create');
            if (confirmation) issued = await confirmation.issue(tx, row);
            return row;
          }),
        );
        if (confirmation) {
          try {
            await confirmation.send(created, owner.email, issued);
          } catch {
            // Without the mail the owner cannot confirm: give the money back rather than strand it.
            await this.act(created.id, 'decline', { note: 'the confirmation e-mail could not be sent' });
            return fail('mail_failed', 'the confirmation e-mail could not be sent; the code was cancelled');
          }
        }
        return { ok: true, code: created };
      } catch (error) {
        if (isInsufficientFunds(error)) {
          return fail('insufficient_funds', `not enough ${input.currency} available for this code`);
        }
        // A public segment (1 in 58^5) or sn already taken: draw another code.
        if (sqlState(error) === '23505' && attempt < 5) continue;
        throw error;
      }
    }
  }

  /**
   * Redeems a code for `accountId`, calling from `address`. The offline check runs first (an invalid
   * code is refused before any lookup and is not counted); then the attempt is counted against the
   * account and the address (429 past the limit); a code that is not found stays counted, any other
   * outcome gives the attempt back. Concurrent redeemers of one code queue on its row lock: the
   * first one moves it to `redeemed`, the others find it redeemed.
   */
  async redeem(accountId: number, address: string, text: string): Promise<CodeOutcome> {
    const { db, limits } = this.options;
    const checked = checkCode(text);
    if (!checked.ok) return fail('invalid', 'not a valid transfer code (format or checksum)');
    const reservation = await reserveAttempt(db, accountId, address, limits, this.options.now());
    if (reservation.retryAfterMs > 0) {
      return fail(
        'too_many_failures',
        'too many failed redemptions from this account or address; try again later',
        reservation.retryAfterMs,
      );
    }
    const redeemer = await userAccount(db, accountId);
    const hash = this.hashOf(checked.code.body);
    const escrow = await this.escrowId();
    let outcome: CodeOutcome;
    try {
      outcome = await retried(() =>
        db.transaction(async (tx) => {
          const code = await lockCodeByHash(tx, hash);
          if (!code || !redeemer) throw new Refusal(fail('not_found', REFUSAL_DETAIL.not_found));
          const now = this.options.now();
          const refusal = redeemRefusal(
            { ...code, nonRefundableBefore: code.nonRefundableBefore.getTime() },
            { accountId: redeemer.id, svcid: redeemer.svcid },
            checked.code.currencyToken,
            now,
          );
          if (refusal) throw new Refusal(fail(refusal, REFUSAL_DETAIL[refusal]));
          if (
            !(await changeStatus(tx, code.id, 'active', {
              status: 'redeemed',
              heldFrom: null,
              now,
              redeemerId: accountId,
            }))
          ) {
            throw new Refusal(fail('already_redeemed', REFUSAL_DETAIL.already_redeemed));
          }
          await this.move(tx, code, escrow, accountId, 'redeem');
          return { ok: true as const, code: (await lockCodeById(tx, code.id))! };
        }),
      );
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      outcome = error.failure;
    }
    if (outcome.ok || outcome.error !== 'not_found') await releaseAttempt(db, reservation);
    return outcome;
  }

  /**
   * An operator's hold, release or cancel, or the owner's e-mail confirmation, in one transaction
   * (`tx` when the caller has one: a confirmation link is consumed in the same transaction).
   */
  async act(
    id: number,
    action: CodeAction,
    context: { readonly tx?: Sql; readonly note?: string | undefined } = {},
  ): Promise<CodeOutcome> {
    const run = async (sql: Sql): Promise<CodeOutcome> => {
      const code = await lockCodeById(sql, id);
      if (!code) return fail('not_found', `no transfer code ${id}`);
      const next = transition(code.status, code.heldFrom, action);
      if (!next.ok) return fail('state', next.detail);
      const now = this.options.now();
      await changeStatus(sql, code.id, code.status, { status: next.status, heldFrom: next.heldFrom, now });
      if (next.refund) {
        await this.move(sql, code, await this.escrowId(sql), code.ownerId, 'cancel', context.note);
      }
      return { ok: true, code: (await lockCodeById(sql, code.id))! };
    };
    if (context.tx) return run(context.tx);
    return retried(() => this.options.db.transaction(run));
  }

  /** One ledger entry moving a code's amount; the idempotency key names the code and the step. */
  private async move(
    tx: Sql,
    code: StoredCode,
    fromId: number,
    toId: number,
    step: 'create' | 'redeem' | 'cancel',
    note?: string,
  ): Promise<void> {
    const reason = `svc_code ${code.sn} ${step}${note ? `: ${note}` : ''}`;
    const built = transfer(fromId, toId, code.currency, code.amount, reason);
    if (!built.ok) throw new Error(built.detail);
    // The ledger's one-statement posting inside this transaction (src/wallet/post.ts), so the code's
    // status and its money commit together; a refusal throws FundsRefused and the transaction rolls back.
    const posted = await postInTransaction(tx, {
      ...built.entry,
      kind: 'svc_code',
      idempotencyKey: `svc_code:${step}:${code.id}`,
    });
    // Each step of a code happens once (the status guard); a repeated key means storage is inconsistent.
    if (posted === null) throw new Error(`svc_code ${code.sn}: ${step} was already posted`);
  }
}
