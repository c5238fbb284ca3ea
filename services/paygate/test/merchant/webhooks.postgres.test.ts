import { usePostgresTarget } from '../support/targets.js';
import { webhooksContract } from './webhooks.contract.js';

webhooksContract(usePostgresTarget());
