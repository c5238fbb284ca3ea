import { usePostgresTarget } from '../support/targets.js';
import { invariantsContract } from './invariants.contract.js';

invariantsContract(usePostgresTarget(), { waves: 60, perWave: 40 });
