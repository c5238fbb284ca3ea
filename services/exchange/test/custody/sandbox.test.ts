import { SandboxCustody } from '../../src/custody/sandbox.js';
import { usePostgresTarget } from '../support/targets.js';
import { custodyContract } from './custody.contract.js';

const target = usePostgresTarget();
let custody: SandboxCustody | undefined;
const sandbox = () => {
  custody ??= new SandboxCustody({ db: target.db(), withdrawalDelayMs: 0 });
  return custody;
};

custodyContract('sandbox (btc)', {
  currency: 'btc',
  custody: sandbox,
  externalAddress: async () => 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
  invalidAddresses: [
    'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdr',
    'ltc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
    '0x52908400098527886E0F7030069857D2E4169EE7',
    '',
  ],
  async sameDestination() {
    const canonical = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
    return { spellings: [canonical.toUpperCase()], canonical };
  },
  pay: (address, amount) => sandbox().simulateDeposit('btc', address, amount, null, 0),
  async deepen(txid, blocks) {
    await sandbox().confirmDeposit(txid, blocks);
  },
});
