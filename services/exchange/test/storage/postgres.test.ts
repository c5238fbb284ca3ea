import { usePostgresTarget } from '../support/targets.js';
import { storageContract } from './storage.contract.js';

storageContract(usePostgresTarget());
