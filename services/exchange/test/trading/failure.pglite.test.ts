import { usePgliteTarget } from '../support/targets.js';
import { failureContract } from './failure.contract.js';

failureContract(usePgliteTarget());
