/**
 * Custody on a Bitcoin Core JSON-RPC node (bitcoind, litecoind, forks): addresses from the node's
 * wallet, address validation by the node, incoming transfers by `listsinceblock` from the last
 * block seen (each poll costs O(new transactions)), withdrawals by `sendtoaddress` with the request's
 * tag as the transaction comment, found again by that comment after a crash.
 */
import {
  type Custody,
  CustodyRefusal,
  type DepositAddress,
  type IncomingPage,
  type OutgoingTransfer,
} from './custody.js';
import { coinText, RpcClient, RpcError } from './rpc.js';

export interface NodeCustodyOptions {
  /** The coin this node serves (lower-case code). */
  readonly currency: string;
  /** `http://user:password@host:port` of the node's RPC. */
  readonly url: string;
  readonly cookieFile?: string | undefined;
  /** The node wallet holding the exchange's coins; created or loaded at start. @default 'exchange' */
  readonly wallet?: string;
  /** How far back `findSent` looks, in wallet transactions. @default 10000 */
  readonly findSentDepth?: number;
}

interface SinceBlock {
  transactions: {
    category: string;
    txid: string;
    vout: number;
    address?: string;
    amount: number;
    confirmations: number;
  }[];
  lastblock: string;
}

interface WalletTx {
  category: string;
  txid: string;
  comment?: string;
}

/** RPC error codes meaning "no such wallet transaction" (RPC_INVALID_ADDRESS_OR_KEY). */
const NOT_FOUND = -5;
/** Wallet not found / not loaded (RPC_WALLET_NOT_FOUND), already loaded (RPC_WALLET_ALREADY_LOADED). */
const WALLET_NOT_FOUND = -18;
const WALLET_ALREADY_LOADED = -35;

export class NodeCustody implements Custody {
  readonly kind = 'node' as const;
  readonly currency: string;
  private readonly rpc: RpcClient;
  private readonly wallet: string;
  private readonly depth: number;
  private opened = false;

  constructor(options: NodeCustodyOptions) {
    this.currency = options.currency;
    this.rpc = new RpcClient({ url: options.url, cookieFile: options.cookieFile });
    this.wallet = options.wallet ?? 'exchange';
    this.depth = options.findSentDepth ?? 10_000;
  }

  /** Loads the wallet, creating it on first use. */
  async open(): Promise<void> {
    const loaded = await this.rpc.call<string[]>('listwallets');
    this.opened = true;
    if (loaded.includes(this.wallet)) return;
    try {
      await this.rpc.call('loadwallet', [this.wallet]);
    } catch (error) {
      if (!(error instanceof RpcError)) throw error;
      if (error.code === WALLET_ALREADY_LOADED) return;
      if (error.code !== WALLET_NOT_FOUND && !/not found|does not exist/i.test(error.message)) throw error;
      await this.rpc.call('createwallet', [this.wallet]);
    }
  }

  private async call<T>(method: string, params: readonly unknown[] = []): Promise<T> {
    // A node that was down at start is opened on first use.
    if (!this.opened) await this.open();
    return this.rpc.call<T>(method, params, this.wallet);
  }

  async newAddress(_currency: string, accountId: number): Promise<DepositAddress> {
    const address = await this.call<string>('getnewaddress', [`account-${accountId}`, 'bech32']);
    return { address, memo: null };
  }

  async validateAddress(_currency: string, address: string): Promise<boolean> {
    return (await this.canonicalAddress(_currency, address)) !== undefined;
  }

  async canonicalAddress(_currency: string, address: string): Promise<string | undefined> {
    // The node answers the address it decoded written its own way (EncodeDestination): bech32 in
    // lower case, Litecoin's P2SH as `M...`.
    const answer = await this.rpc.call<{ isvalid: boolean; address?: string }>('validateaddress', [address]);
    return answer.isvalid === true && typeof answer.address === 'string' ? answer.address : undefined;
  }

  async incoming(_currency: string, cursor: string | null, minConfirmations: number): Promise<IncomingPage> {
    // lastblock is the block minConfirmations - 1 below the tip: resuming there lists again what is
    // not yet deep enough, and (include_removed) what a reorg took out.
    const since = await this.call<SinceBlock>('listsinceblock', [
      cursor ?? '',
      Math.max(1, minConfirmations),
      false,
      true,
    ]);
    return {
      transfers: since.transactions
        .filter((tx) => tx.category === 'receive' && tx.address !== undefined)
        .map((tx) => ({
          txid: tx.txid,
          output: tx.vout,
          address: tx.address!,
          memo: null,
          amount: coinText(tx.amount),
          confirmations: tx.confirmations,
        })),
      cursor: since.lastblock,
    };
  }

  async confirmations(_currency: string, txid: string): Promise<number | 'gone'> {
    try {
      const tx = await this.call<{ confirmations: number }>('gettransaction', [txid]);
      // Negative: conflicted, a double spend made it into the chain instead.
      return tx.confirmations < 0 ? 'gone' : tx.confirmations;
    } catch (error) {
      if (error instanceof RpcError && error.code === NOT_FOUND) return 'gone';
      throw error;
    }
  }

  async send(_currency: string, transfer: OutgoingTransfer): Promise<string> {
    try {
      // Amount as decimal text (the RPC takes a number or a string), never through a float.
      return await this.call<string>('sendtoaddress', [transfer.address, transfer.amount, transfer.tag]);
    } catch (error) {
      // An error answer means the wallet did not commit the transaction: surely not sent.
      if (error instanceof RpcError) throw new CustodyRefusal(error.message);
      throw error;
    }
  }

  async findSent(_currency: string, tag: string): Promise<string | undefined> {
    const page = 500;
    for (let skip = 0; skip < this.depth; skip += page) {
      // Newest last within a page; pages go back in time.
      const txs = await this.call<WalletTx[]>('listtransactions', ['*', page, skip, false]);
      const found = txs.find((tx) => tx.category === 'send' && tx.comment === tag);
      if (found) return found.txid;
      if (txs.length < page) return undefined;
    }
    return undefined;
  }

  async close(): Promise<void> {}
}
