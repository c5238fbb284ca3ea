/** Whether a process with this pid exists (a zombie counts: the launcher's tests reap their own). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
