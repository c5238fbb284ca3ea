import { usePostgresTarget } from '../support/targets.js';
import { orderEntryContract } from './order-entry.contract.js';

orderEntryContract(usePostgresTarget());
