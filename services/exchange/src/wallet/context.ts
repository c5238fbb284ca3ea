import type { Custody } from '../custody/custody.js';
import type { Database } from '../db/database.js';
import type { ReferenceData } from '../reference/load.js';

/** Something to log to (pino's or Fastify's logger fits). */
export interface WalletLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

export const silentLog: WalletLog = { info() {}, warn() {}, error() {} };

/** What the wallet's parts share. */
export interface WalletContext {
  readonly db: Database;
  readonly reference: ReferenceData;
  /** The custody serving a coin, or undefined when none does. */
  custodyOf(currency: string): Custody | undefined;
  /** Confirmations a deposit needs before it is credited. */
  confirmationsFor(currency: string): number;
  /** Replaced by the server's logger once the app exists (Wallet.useLog). */
  log: WalletLog;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
}
