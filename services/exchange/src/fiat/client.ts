import { type Static, type TSchema, Type } from 'typebox';
import { Value } from 'typebox/value';
import type { PaygateConfig } from '../config.js';
import { GatewayError, Invoice, Payout, Prerequest, Refund } from './gateway-types.js';
import { paygateHeaders } from './signature.js';

/** Why a call to the gateway did not give an answer we can use: a value, never an exception. */
export type GatewayFailure =
  | { readonly kind: 'unreachable'; readonly detail: string }
  | { readonly kind: 'timeout'; readonly detail: string }
  /** The gateway answered with its error shape (4xx/5xx): `code` and `field` as it gave them. */
  | {
      readonly kind: 'refused';
      readonly status: number;
      readonly code: string;
      readonly message: string;
      readonly field?: string;
    }
  | { readonly kind: 'bad_response'; readonly status: number; readonly detail: string }
  | { readonly kind: 'no_public_key'; readonly detail: string };

export type GatewayResult<T> =
  | { readonly ok: true; readonly status: number; readonly value: T }
  | { readonly ok: false; readonly failure: GatewayFailure };

export interface NewPayout {
  readonly reference_id: string;
  readonly service: string;
  /** Upper-case currency code. */
  readonly currency: string;
  /** Decimal text with the currency's decimals, e.g. "100.00". */
  readonly amount: string;
  readonly fields: Readonly<Record<string, string>>;
}

/** Narrowed `fetch`, so tests and callers can pass any implementation of it. */
export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

/**
 * The exchange's client of the payment gateway: public prerequests (by the merchant public key of a
 * currency) and signed merchant calls (payouts, status look-ups). Each call has a timeout; failures
 * come back as values.
 */
export class PaygateClient {
  constructor(
    private readonly config: PaygateConfig,
    private readonly now: () => number = Date.now,
    private readonly fetchImpl: Fetch = fetch,
  ) {}

  /** The merchant public key of a currency, as the account object shows it. */
  publicKey(currency: string): string | undefined {
    return this.config.publicKeys[currency.toLowerCase()];
  }

  /** Services open to deposits in `currency`, with their fields, limits and fees. */
  paymentPrerequest(currency: string): Promise<GatewayResult<Prerequest>> {
    const publicKey = this.publicKey(currency);
    if (!publicKey) return Promise.resolve(noKey(currency));
    return this.call(
      '/public-api/payment-prerequest',
      { currency: currency.toUpperCase(), public_key: publicKey },
      Prerequest,
      false,
    );
  }

  /** Services open to payouts of `amount` (decimal text) in `currency`. */
  payoutPrerequest(currency: string, amount: string): Promise<GatewayResult<Prerequest>> {
    const publicKey = this.publicKey(currency);
    if (!publicKey) return Promise.resolve(noKey(currency));
    return this.call(
      '/public-api/payout-prerequest',
      // The spec types the amount as a number; the text has at most the currency's decimals.
      { amount: Number(amount), currency: currency.toUpperCase(), public_key: publicKey },
      Prerequest,
      false,
    );
  }

  /** Creates a payout; the gateway answers the existing one for a reference it has seen (idempotent). */
  async createPayout(payout: NewPayout): Promise<GatewayResult<Payout>> {
    return unwrapData(await this.call('/merchant-api/payouts', payout, DataOf(Payout), true));
  }

  /** The payout of our reference (a withdrawal id), for reconciliation after a lost answer or callback. */
  async payoutStatus(referenceId: string): Promise<GatewayResult<Payout>> {
    return unwrapData(
      await this.call('/merchant-api/payouts/status', { reference_id: referenceId }, DataOf(Payout), true),
    );
  }

  /** Refunds (part of) a paid invoice; the gateway answers the existing refund for a reference it has seen. */
  async createRefund(refund: {
    reference_id: string;
    invoice_reference_id: string;
    amount: string;
  }): Promise<GatewayResult<Refund>> {
    return unwrapData(await this.call('/merchant-api/refunds', refund, DataOf(Refund), true));
  }

  /** The invoice of our reference (a deposit id). */
  async invoiceStatus(referenceId: string): Promise<GatewayResult<Invoice>> {
    return unwrapData(
      await this.call('/merchant-api/invoices/status', { reference_id: referenceId }, DataOf(Invoice), true),
    );
  }

  private async call<T extends TSchema>(
    path: string,
    body: unknown,
    schema: T,
    signed: boolean,
  ): Promise<GatewayResult<Static<T>>> {
    const text = JSON.stringify(body);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
    };
    if (signed) {
      Object.assign(
        headers,
        paygateHeaders(this.config.merchantId, this.config.merchantSecret, text, this.now()),
      );
    }
    let response: Response;
    let payload: unknown;
    try {
      response = await this.fetchImpl(`${this.config.url}${path}`, {
        method: 'POST',
        headers,
        body: text,
        signal: AbortSignal.timeout(this.config.timeoutMs),
      });
      const raw = await response.text();
      try {
        payload = raw === '' ? undefined : JSON.parse(raw);
      } catch {
        return fail({ kind: 'bad_response', status: response.status, detail: 'the answer is not JSON' });
      }
    } catch (error) {
      const name = (error as Error | undefined)?.name;
      if (name === 'TimeoutError' || name === 'AbortError') {
        return fail({ kind: 'timeout', detail: `no answer from ${path} within ${this.config.timeoutMs} ms` });
      }
      return fail({ kind: 'unreachable', detail: `${path}: ${(error as Error).message}` });
    }
    if (response.status >= 400) {
      if (Value.Check(GatewayError, payload)) {
        const { code, message, field } = payload.error;
        return fail({
          kind: 'refused',
          status: response.status,
          code: String(code),
          message,
          ...(field ? { field } : {}),
        });
      }
      return fail({ kind: 'bad_response', status: response.status, detail: `HTTP ${response.status}` });
    }
    if (!Value.Check(schema, payload)) {
      const first = Value.Errors(schema, payload)[0];
      return fail({
        kind: 'bad_response',
        status: response.status,
        detail: `unexpected answer shape at ${first?.instancePath || '/'}: ${first?.message ?? 'invalid'}`,
      });
    }
    return { ok: true, status: response.status, value: payload };
  }
}

function DataOf<T extends TSchema>(schema: T) {
  return Type.Object({ data: schema });
}

function unwrapData<T>(result: GatewayResult<{ data: T }>): GatewayResult<T> {
  return result.ok ? { ok: true, status: result.status, value: result.value.data } : result;
}

function fail(failure: GatewayFailure): { ok: false; failure: GatewayFailure } {
  return { ok: false, failure };
}

function noKey(currency: string): { ok: false; failure: GatewayFailure } {
  return fail({ kind: 'no_public_key', detail: `no gateway public key for ${currency.toUpperCase()}` });
}

/** One line saying what went wrong, for logs and error messages. */
export function describeFailure(failure: GatewayFailure): string {
  switch (failure.kind) {
    case 'refused':
      return `the gateway refused (${failure.status} ${failure.code}): ${failure.message}`;
    case 'bad_response':
      return `the gateway answered unexpectedly (${failure.status}): ${failure.detail}`;
    default:
      return failure.detail;
  }
}
