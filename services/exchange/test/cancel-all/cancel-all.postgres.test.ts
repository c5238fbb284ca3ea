import { usePostgresTarget } from '../support/targets.js';
import { cancelAllContract } from './cancel-all.contract.js';

cancelAllContract(usePostgresTarget());
