import { usePgliteTarget } from '../support/targets.js';
import { webhooksContract } from './webhooks.contract.js';

webhooksContract(usePgliteTarget());
