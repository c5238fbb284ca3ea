import { usePostgresTarget } from '../support/targets.js';
import { failureContract } from './failure.contract.js';

failureContract(usePostgresTarget());
