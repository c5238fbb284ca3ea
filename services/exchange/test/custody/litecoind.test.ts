import { createHash } from 'node:crypto';
import { type Litecoind, startLitecoind } from '@platform/testkit/litecoind';
import { base58 } from '@scure/base';
import { afterAll, beforeAll, expect } from 'vitest';
import { NodeCustody } from '../../src/custody/node.js';
import { custodyContract } from './custody.contract.js';

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest();
let node: Litecoind;
let custody: NodeCustody;
beforeAll(async () => {
  node = await startLitecoind();
  await node.mine(101);
  custody = new NodeCustody({ currency: 'ltc', url: node.url, wallet: 'exchange' });
  await custody.open();
  // The exchange's hot wallet gets coins to send withdrawals from.
  const hot = await node.rpc<string>('getnewaddress', ['', 'bech32'], 'exchange');
  await node.rpc('sendtoaddress', [hot, '10'], 'miner');
  await node.mine(1);
}, 120_000);
afterAll(async () => {
  await node?.stop();
});

custodyContract('node (litecoind -regtest)', {
  currency: 'ltc',
  custody: () => custody,
  externalAddress: () => node.rpc<string>('getnewaddress', ['', 'bech32'], 'miner'),
  invalidAddresses: ['rltc1qnotanaddress', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', 'hello', ''],
  async sameDestination() {
    // A P2SH script in Litecoin's old version byte (regtest 196, `2...`) is the `Q...` address the
    // node writes (version 58); a bech32 address in upper case is the lower-case one.
    const current = await node.rpc<string>('getnewaddress', ['', 'p2sh-segwit'], 'miner');
    const bytes = base58.decode(current);
    const body = new Uint8Array([196, ...bytes.slice(1, 21)]);
    const old = base58.encode(new Uint8Array([...body, ...sha256(sha256(body)).subarray(0, 4)]));
    const bech32 = await node.rpc<string>('getnewaddress', ['', 'bech32'], 'miner');
    const upper = await custody.canonicalAddress('ltc', bech32.toUpperCase());
    expect(upper).toBe(bech32);
    return { spellings: [old], canonical: current };
  },
  async pay(address, amount) {
    const txid = await node.rpc<string>('sendtoaddress', [address, amount], 'miner');
    await node.settled();
    return txid;
  },
  async deepen(_txid, blocks) {
    await node.mine(blocks);
  },
});
