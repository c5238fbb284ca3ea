import { usePgliteTarget } from '../support/targets.js';
import { httpContract } from './http.contract.js';

httpContract(usePgliteTarget());
