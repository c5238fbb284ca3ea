import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireBinary } from './binaries.js';
import { freePort } from './ports.js';
import { type ManagedProcess, spawnManaged, waitUntilReady } from './process.js';

const DEBIAN_PACKAGE = 'litecoind';

export interface Litecoind {
  /** `http://user:password@127.0.0.1:<rpc port>`: what a JSON-RPC client is given. */
  readonly url: string;
  readonly rpcPort: number;
  readonly dataDir: string;
  /** Calls the node (on `/wallet/<wallet>` when given); a node error throws with its code and message. */
  rpc<T = unknown>(method: string, params?: readonly unknown[], wallet?: string): Promise<T>;
  /**
   * Mines `blocks` blocks to a fresh address of `wallet` (created when missing) and returns their hashes,
   * once every wallet of the node has seen them.
   */
  mine(blocks: number, wallet?: string): Promise<string[]>;
  /**
   * Waits until every wallet of the node has seen what the node accepted so far: wallets learn of new
   * mempool transactions and blocks asynchronously, so a transaction just sent from one wallet may not
   * be listed yet by another (`syncwithvalidationinterfacequeue`, a regtest helper of the node).
   */
  settled(): Promise<void>;
  readonly process: ManagedProcess;
  /** Stops the node and deletes its data directory. */
  stop(): Promise<void>;
}

export class RpcCallError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
  ) {
    super(`${method}: ${message} (${code})`);
    this.name = 'RpcCallError';
  }
}

/**
 * A throw-away `litecoind -regtest` on free ports with its own data directory, under the watchdog
 * (it dies with the test process). `-fallbackfee` lets `sendtoaddress` work on an empty fee
 * estimator; `-walletrbf` makes wallet transactions replaceable and
 * `-mempoolreplacement` (off by default in Litecoin) lets the mempool take the replacement, so a test
 * can double-spend one.
 * A missing binary fails naming the Debian package `litecoind`.
 */
export async function startLitecoind(): Promise<Litecoind> {
  const binary = requireBinary('litecoind', DEBIAN_PACKAGE);
  const dataDir = mkdtempSync(join(tmpdir(), 'testkit-litecoind-'));
  let rpcPort = await freePort();
  const user = 'testkit';
  const password = randomBytes(12).toString('hex');
  const auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  let id = 0;
  const rpc = async <T>(method: string, params: readonly unknown[] = [], wallet?: string): Promise<T> => {
    id += 1;
    const response = await fetch(
      `http://127.0.0.1:${rpcPort}/${wallet === undefined ? '' : `wallet/${wallet}`}`,
      {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '1.0', id, method, params }),
        signal: AbortSignal.timeout(30_000),
      },
    );
    const text = await response.text();
    const answer = JSON.parse(text) as { result: T; error: { code: number; message: string } | null };
    if (answer.error) throw new RpcCallError(method, answer.error.code, answer.error.message);
    return answer.result;
  };
  const launch = (p2pPort: number) =>
    spawnManaged({
      name: `litecoind:${rpcPort}`,
      command: binary,
      args: [
        '-regtest',
        '-server',
        `-datadir=${dataDir}`,
        `-rpcport=${rpcPort}`,
        `-port=${p2pPort}`,
        '-rpcbind=127.0.0.1',
        '-rpcallowip=127.0.0.1',
        `-rpcuser=${user}`,
        `-rpcpassword=${password}`,
        '-listen=0',
        '-dnsseed=0',
        '-fallbackfee=0.0001',
        '-txindex',
        '-walletrbf=1',
        '-mempoolreplacement=1',
        '-printtoconsole',
      ],
    });
  // The ports come from freePort() and are bound by litecoind a moment later: should another process
  // take one meanwhile, litecoind exits ("Unable to bind") and is started again on new ports.
  let proc = launch(await freePort());
  for (let attempt = 1; ; attempt++) {
    try {
      await waitUntilReady(
        proc,
        async () => {
          await rpc('getblockchaininfo');
          return true;
        },
        60_000,
      );
      break;
    } catch (error) {
      if (proc.isRunning() || attempt === 3 || !/bind/i.test(proc.output())) throw error;
      rpcPort = await freePort();
      proc = launch(await freePort());
    }
  }
  const url = `http://${user}:${password}@127.0.0.1:${rpcPort}`;
  const wallets = new Set<string>();
  const ensureWallet = async (wallet: string) => {
    if (wallets.has(wallet)) return;
    const loaded = await rpc<string[]>('listwallets');
    if (!loaded.includes(wallet)) {
      try {
        await rpc('createwallet', [wallet]);
      } catch (error) {
        if (!(error instanceof RpcCallError)) throw error;
        await rpc('loadwallet', [wallet]);
      }
    }
    wallets.add(wallet);
  };
  return {
    url,
    rpcPort,
    dataDir,
    rpc,
    process: proc,
    async mine(blocks, wallet = 'miner') {
      await ensureWallet(wallet);
      const address = await rpc<string>('getnewaddress', ['', 'bech32'], wallet);
      const hashes = await rpc<string[]>('generatetoaddress', [blocks, address]);
      await rpc('syncwithvalidationinterfacequeue');
      return hashes;
    },
    async settled() {
      await rpc('syncwithvalidationinterfacequeue');
    },
    async stop() {
      await proc.stop(15_000);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
