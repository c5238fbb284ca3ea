import { usePgliteTarget } from '../support/targets.js';
import { refundsContract } from './refunds.contract.js';

refundsContract(usePgliteTarget());
