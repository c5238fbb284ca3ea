import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { currentHolder, holderAlive } from '@platform/sql-storage/process-lock';

/**
 * `<DATA_DIR>/operator.json`: where the running server's loopback operator endpoint listens and the
 * token it takes (`{protocol, port, token, pid, start}`), written by the server at start (mode 0600,
 * so only its user reads the token) and removed when it stops.
 */
export const OPERATOR_FILE = 'operator.json';

/**
 * 2: every command, answered as `{code, stdout, stderr}` (1, before issue 41: the deposit
 * commands only, answered as `{code, output, error}`).
 */
export const OPERATOR_PROTOCOL = 2;

export interface OperatorRecord {
  readonly protocol: number;
  readonly port: number;
  readonly token: string;
  readonly pid: number;
  readonly start?: string | undefined;
}

/** Writes the file for this process: created under a temporary name (mode 0600) and renamed, so a reader never sees half of it. */
export function writeOperatorFile(dataDir: string, port: number, token: string): string {
  const file = path.join(dataDir, OPERATOR_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  // Removed first: `mode` applies only to a file being created (one left by a crash may differ).
  rmSync(temporary, { force: true });
  const record: OperatorRecord = { protocol: OPERATOR_PROTOCOL, port, token, ...currentHolder() };
  writeFileSync(temporary, JSON.stringify(record), { mode: 0o600, flag: 'wx' });
  renameSync(temporary, file);
  return file;
}

/** Removes the file if this process wrote it (a newer server's file stays). */
export function removeOperatorFile(dataDir: string): void {
  const file = path.join(dataDir, OPERATOR_FILE);
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as { pid?: unknown };
    if (record.pid === process.pid) rmSync(file, { force: true });
  } catch {
    // Gone already, or not readable: nothing of this process to remove.
  }
}

/** What the tool finds in a data folder: a running server's endpoint, a file it must not trust, or nothing. */
export type OperatorLookup =
  | { readonly kind: 'server'; readonly record: OperatorRecord }
  | { readonly kind: 'refused'; readonly message: string }
  | { readonly kind: 'none' };

/**
 * Reads `dataDir`'s operator file. Nothing when there is none or it is a crashed server's (its
 * process dead, a zombie, or its pid reused). Refused when it could be another user's: a file the
 * tool's user does not own, or that others may read or write, could name a port of theirs, to which
 * the tool would send the command and from which it would print the answer.
 */
export function findOperatorEndpoint(dataDir: string): OperatorLookup {
  const file = path.join(dataDir, OPERATOR_FILE);
  let text: string;
  let owner: number;
  let mode: number;
  try {
    const stat = statSync(file);
    owner = stat.uid;
    mode = stat.mode;
    text = readFileSync(file, 'utf8');
  } catch {
    return { kind: 'none' };
  }
  let record: Partial<OperatorRecord>;
  try {
    record = JSON.parse(text) as Partial<OperatorRecord>;
  } catch {
    return { kind: 'none' };
  }
  if (typeof record.pid !== 'number' || record.pid === process.pid) return { kind: 'none' };
  if (!holderAlive({ pid: record.pid, start: typeof record.start === 'string' ? record.start : undefined })) {
    return { kind: 'none' };
  }
  const uid = process.getuid?.();
  if (uid !== undefined && (owner !== uid || (mode & 0o077) !== 0)) {
    return {
      kind: 'refused',
      message: `${file} is not this user's own file with mode 0600 (owner uid ${owner}, mode ${(mode & 0o777).toString(8)}): not sending a command to the endpoint it names; remove it if no exchange of yours runs on this folder`,
    };
  }
  if (
    record.protocol !== OPERATOR_PROTOCOL ||
    typeof record.port !== 'number' ||
    typeof record.token !== 'string'
  ) {
    return {
      kind: 'refused',
      message: `the exchange running on this data folder (process ${record.pid}) is another version: stop it to run this command, or run the tool of its version`,
    };
  }
  return { kind: 'server', record: record as OperatorRecord };
}
