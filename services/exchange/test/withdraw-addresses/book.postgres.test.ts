import { usePostgresTarget } from '../support/targets.js';
import { bookContract } from './book.contract.js';

bookContract(usePostgresTarget());
