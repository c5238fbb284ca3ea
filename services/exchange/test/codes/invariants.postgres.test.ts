import { usePostgresTarget } from '../support/targets.js';
import { invariantsContract } from './invariants.contract.js';

invariantsContract(usePostgresTarget(), 80, 15);
