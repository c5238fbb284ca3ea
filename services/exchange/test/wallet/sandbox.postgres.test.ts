import { usePostgresTarget } from '../support/targets.js';
import { sandboxContract } from './sandbox.contract.js';

sandboxContract(usePostgresTarget());
