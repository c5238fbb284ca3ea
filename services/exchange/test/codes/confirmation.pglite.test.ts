import { usePgliteTarget } from '../support/targets.js';
import { confirmationContract } from './confirmation.contract.js';

confirmationContract(usePgliteTarget());
