/**
 * Loaded with `--import` through NODE_OPTIONS (where `--cpu-prof` is not allowed) by the bench when
 * BENCH_CPU_PROF names a folder: profiles the whole process and writes `<pid>.cpuprofile` there when it
 * exits (the session is on this thread, so `post` answers synchronously, as `exit` requires).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 200 });
  session.post('Profiler.start');
  process.on('exit', () => {
    session.post('Profiler.stop', (error, result) => {
      if (!error) writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
