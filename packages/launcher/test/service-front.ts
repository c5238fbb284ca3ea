import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import { startTcpFront, type TcpFront } from '@platform/testkit/front';

/**
 * A stable health address for a fake service the launcher starts. The launcher needs the address up
 * front (in the service's package.json), but a port probed free and bound later by the service can
 * be taken by another parallel test meanwhile. So the address is a front the test process holds; the
 * service binds port 0 and writes the port it got to `portFile` (see `announcePort`); the front
 * forwards there from then on and resets connections before (a health check that fails, as for a
 * service not listening yet).
 */
export async function serviceFront(portFile: string): Promise<TcpFront> {
  const front = await startTcpFront();
  let targeted = false;
  const follow = (): void => {
    if (targeted) return;
    let text: string;
    try {
      text = readFileSync(portFile, 'utf8');
    } catch {
      return; // not written yet
    }
    targeted = true;
    front.target(Number(text));
  };
  // The service renames the file into place, so a change event sees it whole.
  const watcher: FSWatcher = watch(dirname(portFile), (_event, name) => {
    if (name === basename(portFile)) follow();
  });
  follow();
  return {
    ...front,
    async close() {
      watcher.close();
      await front.close();
    },
  };
}

/**
 * Source lines for a fake service: once `server` (a node:http server bound to port 0) listens,
 * its port is written to `portFile` (to a temporary name, then renamed, so it is never read half).
 */
export function announcePort(server: string, portFile: string): string {
  const tmp = JSON.stringify(`${portFile}.tmp`);
  return `void import('node:fs').then((fs) => {
  fs.writeFileSync(${tmp}, String((${server}.address() as { port: number }).port));
  fs.renameSync(${tmp}, ${JSON.stringify(portFile)});
});`;
}
