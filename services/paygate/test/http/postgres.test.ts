import { usePostgresTarget } from '../support/targets.js';
import { httpContract } from './http.contract.js';

httpContract(usePostgresTarget());
