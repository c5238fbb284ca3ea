import type { FeeRule } from '../domain/fees.js';
import type { FieldRule } from '../domain/fields.js';
import type { AmountLimits } from '../domain/limits.js';
import type { CallbackFaults } from '../sandbox/faults.js';

/** The gateway's merchants, methods and services, loaded once at start (src/catalog/load.ts). */

export interface Merchant {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly icon: string;
  readonly website: string;
  readonly testMode: boolean;
  /** currency -> public key */
  readonly publicKeys: ReadonlyMap<string, string>;
  readonly callbackUrl: string;
  readonly returnUrl: string;
  /** Signs callbacks and verifies merchant API calls. Never logged. */
  readonly secret: string;
  /**
   * The fault-injecting sandbox on this merchant's callbacks (`callback_faults`,
   * `PAYGATE_MERCHANT_CALLBACK_FAULTS_<ID>`); only a test merchant may have it. @default none
   */
  readonly callbackFaults?: CallbackFaults;
}

export interface Method {
  readonly code: string;
  readonly category: string;
  readonly name: Readonly<Record<string, string>>;
  readonly description: string;
  readonly metadata: readonly unknown[];
  readonly position: number;
  readonly hide: boolean;
}

export interface Service {
  readonly code: string;
  readonly method: string;
  readonly currency: string;
  /** `hpp`: a deposit through the hosted payment page; `payout`: money sent out. */
  readonly flow: 'hpp' | 'payout';
  readonly fields: readonly FieldRule[];
  /** Decimal strings as configured, and the same in minor units. */
  readonly amountMin: string;
  readonly amountMax: string;
  readonly limits: AmountLimits;
  readonly fee: FeeRule;
}

/** A text in several languages (`en` always present), as a service field's `label` and `hint`. */
export type Texts = Readonly<Record<string, string>>;

/** The hosted page's own inputs (card number, expiry, security code, 3-D Secure code). */
export type PageFieldKey = 'card_number' | 'expiry' | 'cvc' | 'code';
export type PageFields = Readonly<Record<PageFieldKey, { readonly label: Texts; readonly hint: Texts }>>;

export interface Catalog {
  /** Labels and hints of the hosted page's inputs, per language. */
  readonly pageFields: PageFields;
  readonly merchants: ReadonlyMap<string, Merchant>;
  readonly methods: ReadonlyMap<string, Method>;
  readonly services: ReadonlyMap<string, Service>;
  /** Decimals of each currency. */
  readonly precision: ReadonlyMap<string, number>;
  /** Finds the merchant and currency of a public key. */
  byPublicKey(key: string): { merchant: Merchant; currency: string } | undefined;
  /** The services of one currency and flow, in method position order. */
  servicesFor(currency: string, flow: 'hpp' | 'payout'): Service[];
}
