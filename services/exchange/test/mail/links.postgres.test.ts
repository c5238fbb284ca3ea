import { usePostgresTarget } from '../support/targets.js';
import { linksContract } from './links.contract.js';

linksContract(usePostgresTarget());
