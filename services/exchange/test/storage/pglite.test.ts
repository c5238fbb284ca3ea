import { usePgliteTarget } from '../support/targets.js';
import { storageContract } from './storage.contract.js';

storageContract(usePgliteTarget());
