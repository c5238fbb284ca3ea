import { randomBytes } from 'node:crypto';
import type { Sql } from '@platform/sql-storage/database';
import { attemptFailedEvent, invoiceEvent } from '../callbacks/event.js';
import { enqueueCallback } from '../callbacks/outbox.js';
import type { Merchant, Service } from '../catalog/catalog.js';
import { afterFailedAttempt } from '../domain/card-attempts.js';
import { validateFields } from '../domain/fields.js';
import { type InvoiceStatus, invoiceCanMove, invoiceHasExpired } from '../domain/invoice.js';
import { checkInvoiceForm, type InvoiceForm, isUnsignedForm } from '../domain/invoice-form.js';
import { ApiError } from '../errors.js';
import {
  expiredInvoiceIds,
  findInvoice,
  findInvoiceByReference,
  type Invoice,
  insertInvoice,
  updateInvoice,
} from '../store/invoices.js';
import { priceServiceAmount, serviceAmount } from './amounts.js';
import type { PaymentDeps } from './deps.js';

/** Invoice ids: `inv_` and 20 hex digits. */
const INVOICE_ID = /^inv_[0-9a-f]{20}$/;

function newInvoiceId(): string {
  return `inv_${randomBytes(10).toString('hex')}`;
}

/** Whether `id` can name an invoice; anything else (a NUL byte, 600 characters) is unknown without a lookup. */
export function isInvoiceId(id: string): boolean {
  return INVOICE_ID.test(id);
}

export interface CreateInvoiceInput {
  readonly publicKey: string;
  readonly referenceId: string;
  readonly description: string;
  readonly service: string;
  readonly serviceFields: Readonly<Record<string, unknown>>;
  readonly currency: string;
  readonly amount: string | number;
  /** The hosted page's language the merchant chose (`en`, `uk`, `ru`); none: the browser's. */
  readonly locale?: string | undefined;
  /** The merchant's signature of the form and its expiry (domain/invoice-form.ts), as received. */
  readonly formSignature: { readonly expires: unknown; readonly signature: unknown };
  /**
   * Whether a form without `signature` and `expires` may create an invoice for a new reference (the
   * spec's body on the JSON API, README "Unsigned invoices"); the simplified form posted to the
   * hosted page never may.
   */
  readonly unsignedAllowed: boolean;
  /** The client's address (`request.ip`), which the limit on unsigned creates counts by. */
  readonly clientAddress: string;
}

/**
 * Checks the merchant's signature of a create or repeat: the answer carries the hosted page's token,
 * so the public key and a guessed reference id must not be enough to get it. A valid signature proves
 * the request is the merchant's (`proven`), also when the form has expired since: its Idempotency-Key
 * may then be read (a retry after the expiry is replayed).
 */
async function requireSignedForm(
  deps: Pick<PaymentDeps, 'now' | 'secrets'>,
  merchant: Merchant,
  form: Omit<InvoiceForm, 'expires'>,
  given: CreateInvoiceInput['formSignature'],
  proven: (() => void) | undefined,
): Promise<void> {
  // Signed with the merchant's secret, or during a rotation's grace period with the previous one
  // (src/secrets/), as its API calls are.
  const secrets = deps.secrets ? await deps.secrets.accepted(merchant) : [merchant.secret];
  const checks = secrets.map((secret) => checkInvoiceForm(secret, form, given, deps.now()));
  const check = checks.find((c) => c.ok || c.reason === 'expired') ?? checks[0]!;
  if (check.ok || check.reason === 'expired') proven?.();
  if (check.ok) return;
  if (check.reason === 'expired') {
    throw new ApiError('form_expired', 'this payment form has expired: start the deposit again', 'expires');
  }
  throw new ApiError(
    'bad_form_signature',
    check.reason === 'missing'
      ? 'signature and expires are required: send the form the merchant gave you as it is'
      : 'signature does not match the form the merchant signed',
    'signature',
  );
}

/** Resolves a public key and checks the request's currency is the key's. */
export function merchantOfKey(
  deps: Pick<PaymentDeps, 'catalog'>,
  publicKey: string,
  currency: string,
): { merchant: Merchant; currency: string } {
  const found = deps.catalog.byPublicKey(publicKey);
  if (!found) throw new ApiError('unknown_public_key', 'no merchant has this public key', 'public_key');
  if (currency.toUpperCase() !== found.currency) {
    throw new ApiError(
      'currency_mismatch',
      `this public key is for ${found.currency}, not ${currency.toUpperCase()}`,
      'currency',
    );
  }
  return found;
}

/** A deposit service of the currency; `default` picks the first (cards come first). */
export function depositService(deps: Pick<PaymentDeps, 'catalog'>, code: string, currency: string): Service {
  const service =
    code === 'default' ? deps.catalog.servicesFor(currency, 'hpp')[0] : deps.catalog.services.get(code);
  if (service?.flow !== 'hpp' || service.currency !== currency) {
    throw new ApiError('unknown_service', `no deposit service "${code}" in ${currency}`, 'service');
  }
  return service;
}

export interface CreatedInvoice {
  readonly invoice: Invoice;
  readonly merchant: Merchant;
  readonly created: boolean;
}

/**
 * The caller's Idempotency-Key (idempotency/hooks.ts): told once the request has proven the merchant
 * (before that the key is not the request's to take or read), and taken last in the invoice's
 * transaction with the outcome, so the key's answer and the invoice commit together or not at all.
 */
export interface InvoiceTransactionHooks {
  proven(merchantId: string): void;
  after(tx: Sql, outcome: CreatedInvoice): Promise<void>;
}

/** What an unsigned create that finds its reference taken is told, whatever the parameters. */
const TAKEN_UNSIGNED =
  'this reference_id already has an invoice: it is answered again only to the form the merchant signed ' +
  '(expires, signature); start a new deposit, or send the signed form';

/**
 * Creates an invoice, or answers the existing one of the same (merchant, reference). A form the
 * merchant signed (README "Signed invoice forms") creates, or repeats when amount, currency and
 * service match (409 otherwise). A form without a signature (the spec's body, README "Unsigned
 * invoices"; only where `unsignedAllowed`) creates an invoice for a new reference only, counted per
 * client address; for a reference that has an invoice it answers 401 and nothing of that invoice
 * (never its token, nor its amount), and it can never carry an Idempotency-Key (`hooks`): nothing it
 * sends proves the merchant. Writes the `created` callback in the same transaction.
 */
export async function createInvoice(
  deps: PaymentDeps,
  input: CreateInvoiceInput,
  hooks?: InvoiceTransactionHooks,
): Promise<CreatedInvoice> {
  const unsigned = isUnsignedForm(input.formSignature);
  if (unsigned && hooks) {
    // Decided before anything is looked up: the merchant's keys are not an unsigned request's to take
    // or to probe, and the same 401 under every key tells nothing of which ones exist.
    throw new ApiError(
      'bad_form_signature',
      "an Idempotency-Key is kept only for a form the merchant signed (expires, signature): send the merchant's form, or no Idempotency-Key",
      'signature',
    );
  }
  const { merchant, currency } = merchantOfKey(deps, input.publicKey, input.currency);
  const service = depositService(deps, input.service, currency);
  const amount = serviceAmount(deps.catalog, service, input.amount);
  if (!unsigned || !input.unsignedAllowed || !deps.unsignedInvoices.allowsAny) {
    // Before the amount's limits and the fields, so that their refusals of a signed form are the
    // merchant's answers, stored under its key; the refusals above prove nothing and store nothing.
    await requireSignedForm(
      deps,
      merchant,
      {
        publicKey: input.publicKey,
        referenceId: input.referenceId,
        currency,
        amount: amount.text,
        service: service.code,
      },
      input.formSignature,
      hooks && (() => hooks.proven(merchant.id)),
    );
  }
  const priced = priceServiceAmount(service, amount);
  const fields = validateFields(service.fields, input.serviceFields);
  if (!fields.ok) throw new ApiError('invalid_field', fields.message, fields.field);
  const serviceFields = fields.values;
  if (unsigned) {
    // Counted once it would reach the invoices table (where a taken reference shows), refused ones too.
    const verdict = await deps.unsignedInvoices.attempt(input.clientAddress);
    if (!verdict.allowed) {
      throw new ApiError(
        'rate_limited',
        `too many invoices without the merchant's signature from this address; retry in ${verdict.retryAfterSeconds} s, or send the form the merchant signed`,
        undefined,
        { retryAfterSeconds: verdict.retryAfterSeconds },
      );
    }
  }
  const now = new Date(deps.now());
  return deps.db.transaction(async (tx) => {
    const outcome = await createOrRepeat(tx);
    await hooks?.after(tx, outcome);
    return outcome;
  });

  async function createOrRepeat(tx: Sql): Promise<CreatedInvoice> {
    const inserted = await insertInvoice(tx, {
      id: newInvoiceId(),
      merchantId: merchant.id,
      referenceId: input.referenceId,
      service: service.code,
      currency,
      amount: priced.text.amount,
      fee: priced.text.fee,
      total: priced.text.total,
      description: input.description,
      serviceFields,
      testMode: merchant.testMode,
      createdAt: now,
      expiresAt: new Date(now.getTime() + deps.invoiceTtlMs),
      locale: input.locale ?? null,
    });
    if (inserted) {
      await enqueueCallback(tx, merchant.id, invoiceEvent(inserted), now);
      return { invoice: inserted, merchant, created: true };
    }
    // The reference has an invoice. Only the merchant's signed form gets it (and its token) again.
    if (unsigned) throw new ApiError('bad_form_signature', TAKEN_UNSIGNED, 'signature');
    const existing = await findInvoiceByReference(tx, merchant.id, input.referenceId);
    if (!existing) throw new Error('invoice conflict without a row');
    if (
      existing.amount !== priced.text.amount ||
      existing.currency !== currency ||
      existing.service !== service.code
    ) {
      throw new ApiError(
        'reference_conflict',
        `reference_id ${input.referenceId} already has an invoice of ${existing.amount} ${existing.currency} (${existing.service})`,
        'reference_id',
      );
    }
    return { invoice: existing, merchant, created: false };
  }
}

/** Moves a locked invoice to `status` and writes its callback; refuses a move the machine forbids. */
async function move(
  tx: Sql,
  invoice: Invoice,
  change: {
    status: InvoiceStatus;
    cardMasked?: string;
    processorToken?: string;
    failureReason?: string;
    cardAttempts?: number;
    lastAttemptFailure?: string | null;
  },
  now: Date,
): Promise<Invoice> {
  if (!invoiceCanMove(invoice.status, change.status)) {
    throw new Error(`invoice ${invoice.id}: ${invoice.status} -> ${change.status} is not allowed`);
  }
  const updated = await updateInvoice(tx, invoice.id, { ...change, at: now });
  await enqueueCallback(tx, invoice.merchantId, invoiceEvent(updated), now);
  return updated;
}

export type PaymentStep =
  | { readonly kind: 'moved'; readonly invoice: Invoice }
  /** The invoice was not in the state this step needs (paid already, expired, ...): nothing changed. */
  | { readonly kind: 'unchanged'; readonly invoice: Invoice };

/**
 * Runs `step` on the invoice locked in a transaction, after expiring it if its time is up. The lock
 * is what makes two concurrent submissions of the page charge once: the second sees the new state.
 */
async function withLockedInvoice(
  deps: PaymentDeps,
  invoiceId: string,
  step: (tx: Sql, invoice: Invoice, now: Date) => Promise<PaymentStep>,
): Promise<PaymentStep> {
  const now = new Date(deps.now());
  return deps.db.transaction(async (tx) => {
    const invoice = await findInvoice(tx, invoiceId, true);
    if (!invoice) throw new ApiError('invoice_not_found', 'no such invoice');
    if (invoiceHasExpired(invoice.status, invoice.expiresAt.getTime(), now.getTime())) {
      return { kind: 'unchanged', invoice: await move(tx, invoice, { status: 'expired' }, now) };
    }
    return step(tx, invoice, now);
  });
}

/**
 * A card that did not pay: the invoice stays open for another card (`created`, no callback: nothing
 * the merchant must act on happened; from `processing` it goes back to `created` silently, so the
 * merchant saw `processing` once) until the payer has used `cardAttemptsMax` cards; then it fails
 * with the last card's reason, announced by its callback as before.
 */
async function failedAttempt(
  deps: PaymentDeps,
  tx: Sql,
  invoice: Invoice,
  reason: string,
  card: { cardMasked?: string; processorToken?: string },
  now: Date,
): Promise<PaymentStep> {
  const outcome = afterFailedAttempt(invoice.cardAttempts, deps.cardAttemptsMax);
  // Every card that did not pay is the merchant's to see: recorded on the invoice and announced by
  // an `attempt_failed` event (its callback and the events API), before the `failed` event when
  // it was the last attempt.
  const announce = (updated: Invoice) =>
    enqueueCallback(
      tx,
      invoice.merchantId,
      attemptFailedEvent(updated, {
        number: outcome.attempts,
        left: outcome.kind === 'retry' ? outcome.left : 0,
        reason,
        at: now,
      }),
      now,
    );
  if (outcome.kind === 'fail') {
    const declined = await updateInvoice(tx, invoice.id, {
      status: invoice.status,
      cardAttempts: outcome.attempts,
      declineReason: reason,
      at: now,
    });
    await announce(declined);
    const change = {
      status: 'failed' as const,
      failureReason: reason,
      cardAttempts: outcome.attempts,
      ...card,
    };
    return { kind: 'moved', invoice: await move(tx, declined, { ...change, lastAttemptFailure: null }, now) };
  }
  if (!invoiceCanMove(invoice.status, 'created') && invoice.status !== 'created') {
    throw new Error(`invoice ${invoice.id}: ${invoice.status} -> created is not allowed`);
  }
  const reopened = await updateInvoice(tx, invoice.id, {
    status: 'created',
    ...card,
    cardAttempts: outcome.attempts,
    lastAttemptFailure: reason,
    declineReason: reason,
    at: now,
  });
  await announce(reopened);
  return { kind: 'moved', invoice: reopened };
}

/** Charges a checked card for a `created` invoice. */
export function payWithCard(deps: PaymentDeps, invoiceId: string, cardNumber: string): Promise<PaymentStep> {
  return withLockedInvoice(deps, invoiceId, async (tx, invoice, now) => {
    if (invoice.status !== 'created') return { kind: 'unchanged', invoice };
    const charge = deps.cards.charge({ number: cardNumber });
    const card = { cardMasked: charge.masked, processorToken: charge.token };
    switch (charge.result) {
      case 'approved':
        return {
          kind: 'moved',
          invoice: await move(tx, invoice, { status: 'success', lastAttemptFailure: null, ...card }, now),
        };
      case 'challenge':
        return {
          kind: 'moved',
          invoice: await move(tx, invoice, { status: 'processing', lastAttemptFailure: null, ...card }, now),
        };
      case 'declined':
      case 'insufficient_funds':
        return failedAttempt(deps, tx, invoice, charge.result, card, now);
    }
  });
}

/** Completes the 3-D Secure step of a `processing` invoice. */
export function confirmChallenge(deps: PaymentDeps, invoiceId: string, code: string): Promise<PaymentStep> {
  return withLockedInvoice(deps, invoiceId, async (tx, invoice, now) => {
    if (invoice.status !== 'processing' || !invoice.processorToken) return { kind: 'unchanged', invoice };
    const result = deps.cards.confirmChallenge(invoice.processorToken, code);
    if (result === 'approved') {
      return { kind: 'moved', invoice: await move(tx, invoice, { status: 'success' }, now) };
    }
    return failedAttempt(deps, tx, invoice, 'authentication_failed', {}, now);
  });
}

/** The payer cancels the 3-D Secure step: that card did not pay; another may, while attempts are left. */
export function cancelChallenge(deps: PaymentDeps, invoiceId: string): Promise<PaymentStep> {
  return withLockedInvoice(deps, invoiceId, async (tx, invoice, now) => {
    if (invoice.status !== 'processing') return { kind: 'unchanged', invoice };
    return failedAttempt(deps, tx, invoice, 'authentication_canceled', {}, now);
  });
}

/** The sandbox e-wallet page's approve/decline buttons (methods other than cards). */
export function decideWalletPayment(
  deps: PaymentDeps,
  invoiceId: string,
  approve: boolean,
): Promise<PaymentStep> {
  return withLockedInvoice(deps, invoiceId, async (tx, invoice, now) => {
    if (invoice.status !== 'created') return { kind: 'unchanged', invoice };
    const change = approve
      ? { status: 'success' as const }
      : { status: 'failed' as const, failureReason: 'declined' };
    return { kind: 'moved', invoice: await move(tx, invoice, change, now) };
  });
}

/** The payer left the page with "Cancel payment": the invoice fails so the merchant can move on. */
export function cancelInvoice(deps: PaymentDeps, invoiceId: string): Promise<PaymentStep> {
  return withLockedInvoice(deps, invoiceId, async (tx, invoice, now) => {
    if (invoice.status !== 'created') return { kind: 'unchanged', invoice };
    return {
      kind: 'moved',
      invoice: await move(tx, invoice, { status: 'failed', failureReason: 'canceled_by_payer' }, now),
    };
  });
}

/** Expires open invoices whose time is up; returns how many. */
export async function expireDueInvoices(deps: PaymentDeps, limit = 50): Promise<number> {
  const ids = await expiredInvoiceIds(deps.db, new Date(deps.now()), limit);
  for (const id of ids)
    await withLockedInvoice(deps, id, async (_tx, invoice) => ({ kind: 'unchanged', invoice }));
  return ids.length;
}
