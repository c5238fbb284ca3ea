import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Error thrown when a server binary a test needs is not installed. Names the Debian package. */
export class MissingBinaryError extends Error {
  constructor(binary: string, debianPackage: string) {
    super(
      `'${binary}' was not found on PATH. Install it with: apt-get install -y ${debianPackage} ` +
        `(or point the test at a running server with the matching *_URL variable).`,
    );
    this.name = 'MissingBinaryError';
  }
}

/** Returns the absolute path of `binary` on PATH (or the sbin folders Debian uses), or throws naming the package. */
export function requireBinary(binary: string, debianPackage: string): string {
  const dirs = (process.env.PATH ?? '').split(delimiter).concat(['/usr/sbin', '/usr/bin', '/sbin', '/bin']);
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = join(dir, binary);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this folder; keep looking
    }
  }
  throw new MissingBinaryError(binary, debianPackage);
}
