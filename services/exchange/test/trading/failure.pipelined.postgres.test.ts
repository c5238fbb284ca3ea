import { usePostgresTarget } from '../support/targets.js';
import { failureContract } from './failure.contract.js';

// The same failures with two batch statements in flight (ORDER_PIPELINE_DEPTH=2).
failureContract(usePostgresTarget(), { pipelineDepth: 2 });
