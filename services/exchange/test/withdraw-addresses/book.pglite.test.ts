import { usePgliteTarget } from '../support/targets.js';
import { bookContract } from './book.contract.js';

bookContract(usePgliteTarget());
