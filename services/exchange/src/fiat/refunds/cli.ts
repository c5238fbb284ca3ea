import type { Database } from '../../db/database.js';
import type { ReferenceData } from '../../reference/load.js';
import type { PaygateClient } from '../client.js';
import { refundFiatDeposit } from './refund.js';
import { listRefunds, listUnsolicited } from './store.js';

export const FIAT_USAGE = `  fiat refund <deposit id>                      refunds a credited fiat deposit: debits the owner, then asks the gateway
  fiat refunds                                  the refunds started here, newest first
  fiat unsolicited                              refund callbacks the exchange did not start (recorded, not applied)`;

export class FiatCommandError extends Error {}

/** `fiat refund|refunds|unsolicited` of the operator tool. */
export async function runFiatCommand(
  deps: { db: Database; reference: ReferenceData; gateway: PaygateClient | undefined },
  sub: string | undefined,
  arg: string | undefined,
): Promise<unknown> {
  switch (sub) {
    case 'refund': {
      if (!arg || !/^[1-9]\d{0,9}$/.test(arg)) throw new FiatCommandError('name the deposit by its id');
      if (!deps.gateway) throw new FiatCommandError('the payment gateway is not configured');
      const started = await refundFiatDeposit({ ...deps, gateway: deps.gateway }, Number(arg));
      if (!started.ok) throw new FiatCommandError(started.reason);
      return { refund: started.refund, gateway_status: started.gateway };
    }
    case 'refunds':
      return listRefunds(deps.db);
    case 'unsolicited':
      return listUnsolicited(deps.db);
    default:
      throw new FiatCommandError(`usage:\n${FIAT_USAGE}`);
  }
}
