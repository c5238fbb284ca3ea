import { usePostgresTarget } from '../support/targets.js';
import { securityContract } from './security.contract.js';

securityContract(usePostgresTarget());
