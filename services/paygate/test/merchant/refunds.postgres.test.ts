import { usePostgresTarget } from '../support/targets.js';
import { refundsContract } from './refunds.contract.js';

refundsContract(usePostgresTarget());
