import { usePostgresTarget } from '../support/targets.js';
import { confirmationContract } from './confirmation.contract.js';

confirmationContract(usePostgresTarget());
