import { usePgliteTarget } from '../support/targets.js';
import { invariantsContract } from './invariants.contract.js';

invariantsContract(usePgliteTarget(), 50, 16);
