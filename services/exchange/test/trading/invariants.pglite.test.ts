import { usePgliteTarget } from '../support/targets.js';
import { invariantsContract } from './invariants.contract.js';

invariantsContract(usePgliteTarget(), { waves: 40, perWave: 40 });
