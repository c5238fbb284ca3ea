import { usePgliteTarget } from '../support/targets.js';
import { idempotencyContract } from './idempotency.contract.js';

idempotencyContract(usePgliteTarget());
