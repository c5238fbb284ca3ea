import { usePgliteTarget } from '../support/targets.js';
import { codesContract } from './codes.contract.js';

codesContract(usePgliteTarget());
