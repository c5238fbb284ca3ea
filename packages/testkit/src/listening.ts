import { readdir, readFile, readlink } from 'node:fs/promises';

/**
 * The TCP ports a process (and its descendants) listens on, read from Linux's /proc. A server told
 * to bind port 0 gets a port from the kernel that no one else can hold; this is how a test learns it
 * without the service having to print it, and without the `freePort()` race (a port probed free,
 * released, then bound by whoever asks first).
 */
export async function listeningPorts(rootPid: number): Promise<number[]> {
  const pids = await descendants(rootPid);
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = await readdir(`/proc/${pid}/fd`);
    } catch {
      continue; // the process exited meanwhile
    }
    for (const fd of fds) {
      const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const match = /^socket:\[(\d+)\]$/.exec(link);
      if (match?.[1]) inodes.add(match[1]);
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const [, local, , state, , , , , , inode] = fields;
      if (state !== '0A' || !local || !inode || !inodes.has(inode)) continue; // 0A: LISTEN
      ports.add(Number.parseInt(local.split(':')[1] ?? '', 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** `rootPid` and every process below it (the testkit's watchdog shell runs the server as its child). */
async function descendants(rootPid: number): Promise<number[]> {
  const parents = new Map<number, number[]>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!Number.isInteger(ppid)) continue;
    const children = parents.get(ppid) ?? [];
    children.push(Number(entry));
    parents.set(ppid, children);
  }
  const found = [rootPid];
  for (let i = 0; i < found.length; i += 1) found.push(...(parents.get(found[i] ?? -1) ?? []));
  return found;
}

/**
 * Polls the listening ports of `rootPid` until one of them passes `check` (e.g. answers a path only
 * that listener serves), for a process given port 0 for several listeners: which port is which is
 * told by what answers on it. Ports in `exclude` (already identified) are skipped.
 */
export async function findListeningPort(
  rootPid: number,
  check: (port: number) => Promise<boolean>,
  options: { exclude?: readonly number[]; timeoutMs?: number } = {},
): Promise<number> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  while (Date.now() < deadline) {
    for (const port of await listeningPorts(rootPid)) {
      if (options.exclude?.includes(port)) continue;
      if (await check(port).catch(() => false)) return port;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no listening port of process ${rootPid} passed the check`);
}

/** True when an HTTP GET of `path` on `port` of 127.0.0.1 answers 2xx and its body passes `body`. */
export async function httpAnswers(
  port: number,
  path: string,
  body: (text: string) => boolean = () => true,
): Promise<boolean> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(1_000) });
  return response.ok && body(await response.text());
}
