import { usePgliteTarget } from '../support/targets.js';
import { orderEntryContract } from './order-entry.contract.js';

orderEntryContract(usePgliteTarget());
