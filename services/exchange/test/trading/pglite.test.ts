import { usePgliteTarget } from '../support/targets.js';
import { tradingContract } from './trading.contract.js';

tradingContract(usePgliteTarget());
