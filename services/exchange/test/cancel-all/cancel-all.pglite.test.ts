import { usePgliteTarget } from '../support/targets.js';
import { cancelAllContract } from './cancel-all.contract.js';

cancelAllContract(usePgliteTarget());
