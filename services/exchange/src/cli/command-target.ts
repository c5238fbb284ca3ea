import { type CliContext, CliError, runCli } from './commands.js';

/** What an operator command printed and its exit code, as the tool writes them. */
export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Where the operator tool runs a command (src/cli.ts picks one): the database opened in the tool's
 * own process (direct-target.ts), or the running server that holds the embedded database, through
 * its loopback endpoint (loopback-client.ts), which runs `executeCommand` on the server's own
 * database. Either way the tool writes the result's text and exits with its code, so a command's
 * output, errors and exit code do not depend on where it ran.
 */
export interface CommandTarget {
  run(argv: readonly string[]): Promise<CommandResult>;
  close(): Promise<void>;
}

/** A value as the tool prints it: indented JSON, bigints as strings, one newline (console.log). */
export function printed(value: unknown): string {
  return `${JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`;
}

/** A refusal the operator sees (exit code 2): the commands' own, or node:util parseArgs' (a bad option). */
export function isRefusal(error: unknown): error is Error {
  return error instanceof CliError || (error instanceof TypeError && 'code' in error);
}

/**
 * Runs one command on `ctx`: what it printed, and its exit code (0, or 1 for a failed
 * reconciliation); a refusal is code 2 with its message. Anything else is a bug and is thrown.
 */
export async function executeCommand(
  argv: readonly string[],
  ctx: Omit<CliContext, 'print'>,
): Promise<CommandResult> {
  let stdout = '';
  try {
    const code = await runCli(argv, {
      ...ctx,
      print: (value) => {
        stdout += printed(value);
      },
    });
    return { code, stdout, stderr: '' };
  } catch (error) {
    if (!isRefusal(error)) throw error;
    return { code: 2, stdout, stderr: `${error.message}\n` };
  }
}
