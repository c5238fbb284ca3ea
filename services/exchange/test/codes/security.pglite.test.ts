import { usePgliteTarget } from '../support/targets.js';
import { securityContract } from './security.contract.js';

securityContract(usePgliteTarget());
