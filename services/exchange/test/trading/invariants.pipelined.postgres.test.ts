import { usePostgresTarget } from '../support/targets.js';
import { invariantsContract } from './invariants.contract.js';

// The same random traffic with two batch statements in flight (ORDER_PIPELINE_DEPTH=2): batches are
// computed on balances and nonces that batches not yet committed will leave.
invariantsContract(usePostgresTarget(), { waves: 60, perWave: 40, pipelineDepth: 2 });
