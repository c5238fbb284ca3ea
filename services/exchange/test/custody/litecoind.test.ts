import { type Litecoind, startLitecoind } from '@platform/testkit/litecoind';
import { afterAll, beforeAll } from 'vitest';
import { NodeCustody } from '../../src/custody/node.js';
import { custodyContract } from './custody.contract.js';

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
  async pay(address, amount) {
    const txid = await node.rpc<string>('sendtoaddress', [address, amount], 'miner');
    await node.settled();
    return txid;
  },
  async deepen(_txid, blocks) {
    await node.mine(blocks);
  },
});
