import type { CommandResult, CommandTarget } from './command-target.js';
import { OPERATOR_PATH } from './loopback-server.js';
import type { OperatorRecord } from './operator-file.js';

/**
 * How long the tool waits for the server to run a command (a reconciliation of a large ledger
 * scans it all); past that the command's effect is unknown, as when the tool is interrupted.
 */
const ANSWER_TIMEOUT_MS = 600_000;

/** Commands run by the running server of the data folder (operator-file.ts found it), through its loopback endpoint. */
export function serverTarget(record: OperatorRecord): CommandTarget {
  return {
    async run(argv): Promise<CommandResult> {
      let response: Response;
      try {
        response = await fetch(`http://127.0.0.1:${record.port}${OPERATOR_PATH}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${record.token}` },
          body: JSON.stringify({ argv }),
          signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
        });
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        return {
          code: 2,
          stdout: '',
          stderr: `the exchange running on this data folder (process ${record.pid}) did not answer on its operator endpoint (port ${record.port}): ${reason}\n`,
        };
      }
      const answer = (await response.json().catch(() => undefined)) as Partial<CommandResult> | undefined;
      if (
        typeof answer?.code !== 'number' ||
        typeof answer.stdout !== 'string' ||
        typeof answer.stderr !== 'string'
      ) {
        return {
          code: 2,
          stdout: '',
          stderr: `the operator endpoint of process ${record.pid} answered ${response.status} without a result\n`,
        };
      }
      return { code: answer.code, stdout: answer.stdout, stderr: answer.stderr };
    },
    async close() {},
  };
}
