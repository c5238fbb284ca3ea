/**
 * Custody: where a coin's addresses come from, how incoming transfers are seen and how withdrawals
 * leave. Two implementations: `node` (a Bitcoin Core JSON-RPC node, src/custody/node.ts) and
 * `sandbox` (a simulated chain in the database, src/custody/sandbox.ts); one contract suite
 * (test/custody/) runs against both. Amounts cross this interface as decimal text in whole coins,
 * never as floats.
 */

export interface DepositAddress {
  readonly address: string;
  /** Destination tag / memo for currencies that share an address (xrp); null otherwise. */
  readonly memo: string | null;
}

export interface IncomingTransfer {
  readonly txid: string;
  /** Output index inside the transaction. */
  readonly output: number;
  readonly address: string;
  readonly memo: string | null;
  /** Decimal text, whole coins. */
  readonly amount: string;
  readonly confirmations: number;
}

export interface IncomingPage {
  readonly transfers: readonly IncomingTransfer[];
  /** Where the next scan resumes; transfers not yet deep enough are listed again from there. */
  readonly cursor: string;
}

export interface OutgoingTransfer {
  readonly address: string;
  readonly memo: string | null;
  /** Decimal text, whole coins: what the recipient gets. */
  readonly amount: string;
  /** Durable tag stored with the transfer, to find it again after a crash. */
  readonly tag: string;
}

/** An answer of the custody that says for sure the transfer was not made (bad address, no funds). */
export class CustodyRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CustodyRefusal';
  }
}

export interface Custody {
  readonly kind: 'node' | 'sandbox';
  /** A fresh receiving address for an account. */
  newAddress(currency: string, accountId: number): Promise<DepositAddress>;
  /** True when `address` is a valid destination for `currency`. */
  validateAddress(currency: string, address: string): Promise<boolean>;
  /**
   * The custody's own spelling of a valid destination (what the node writes back), or undefined when
   * `address` is not valid: two spellings of one destination give one answer, two destinations never
   * do. The withdrawal address book matches withdrawals by it.
   */
  canonicalAddress(currency: string, address: string): Promise<string | undefined>;
  /**
   * Incoming transfers since `cursor` (null: from the start), including those not yet deep enough
   * to be credited (`minConfirmations` is how deep the caller needs them).
   */
  incoming(currency: string, cursor: string | null, minConfirmations: number): Promise<IncomingPage>;
  /** Confirmations of an incoming or outgoing transaction now; 'gone' when it left the chain for good. */
  confirmations(currency: string, txid: string): Promise<number | 'gone'>;
  /** Sends a withdrawal; throws CustodyRefusal when it was surely not sent. Returns the txid. */
  send(currency: string, transfer: OutgoingTransfer): Promise<string>;
  /** The txid of a transfer sent with `tag`, or undefined when no such transfer was made. */
  findSent(currency: string, tag: string): Promise<string | undefined>;
  close(): Promise<void>;
}
