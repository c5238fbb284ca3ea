import { createServer, type ServerResponse } from 'node:http';
import { Session } from 'node:inspector';
import { getHeapSnapshot } from 'node:v8';
import type { DebugSettings } from '../settings/observability.js';
import type { StatsRegistry } from '../stats/registry.js';
import { listen, type RunningHttpServer } from './http-listen.js';

/**
 * The debug server (spec "Debug server", default 0.0.0.0:6070): `/` lists the paths, `/rlconfig`
 * prints the loaded rules sorted so the output is stable, `/stats` prints the current statistics,
 * and `/debug/pprof/` gives a V8 CPU profile of a requested duration and a heap snapshot of the
 * Node process (openable in Chrome DevTools), in place of Go's pprof formats.
 */
export interface DebugSources {
  readonly registry: StatsRegistry;
  /** Rule lines `<domain.key_value...>: unit=<UNIT> requests_per_unit=<n>, shadow_mode: <bool>`. */
  readonly rlconfigLines: () => readonly string[];
}

/** Longest CPU profile one request may ask for (seconds). */
export const MAX_PROFILE_SECONDS = 300;
const DEFAULT_PROFILE_SECONDS = 30;

const PATHS: readonly (readonly [string, string])[] = [
  ['/debug/pprof/', 'profiling endpoints (CPU profile, heap snapshot)'],
  ['/rlconfig', 'print the loaded rate limit configuration'],
  ['/stats', 'print the current statistics'],
];

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(body);
}

function post<T>(session: Session, method: string): Promise<T> {
  return new Promise((resolve, reject) => {
    session.post(method, (error, result) => (error ? reject(error) : resolve(result as T)));
  });
}

let profiling = false;

/** Records a CPU profile of this process for `seconds` with the inspector's Profiler domain. */
export async function cpuProfile(seconds: number): Promise<object> {
  if (profiling) throw new Error('cpu profiling already in use');
  profiling = true;
  const session = new Session();
  session.connect();
  try {
    await post(session, 'Profiler.enable');
    await post(session, 'Profiler.start');
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const { profile } = await post<{ profile: object }>(session, 'Profiler.stop');
    return profile;
  } finally {
    session.disconnect();
    profiling = false;
  }
}

export function statsLines(registry: StatsRegistry): string[] {
  const snapshot = registry.snapshot();
  const lines = [
    ...[...snapshot.counters].map(([k, v]) => `${k}: ${v}`),
    ...[...snapshot.gauges].map(([k, v]) => `${k}: ${v}`),
    ...[...snapshot.timers].map(
      ([k, t]) => `${k}: count=${t.count} sum_ms=${Math.round(t.sumMs * 1000) / 1000}`,
    ),
  ];
  return lines.sort();
}

export function startDebugServer(settings: DebugSettings, sources: DebugSources): Promise<RunningHttpServer> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://debug');
    switch (url.pathname) {
      case '/':
        return text(res, 200, `${PATHS.map(([p, d]) => `${p}: ${d}`).join('\n')}\n`);
      case '/rlconfig': {
        const lines = [...sources.rlconfigLines()].sort();
        return text(res, 200, lines.length > 0 ? `${lines.join('\n')}\n` : '');
      }
      case '/stats': {
        const lines = statsLines(sources.registry);
        return text(res, 200, lines.length > 0 ? `${lines.join('\n')}\n` : '');
      }
      case '/debug/pprof':
      case '/debug/pprof/':
        return text(
          res,
          200,
          '/debug/pprof/profile?seconds=N: V8 CPU profile (.cpuprofile JSON) recorded for N seconds (default 30)\n' +
            '/debug/pprof/heap: V8 heap snapshot (.heapsnapshot JSON)\n',
        );
      case '/debug/pprof/profile': {
        const raw = url.searchParams.get('seconds');
        const seconds = raw === null || raw === '' ? DEFAULT_PROFILE_SECONDS : Number(raw);
        if (!Number.isInteger(seconds) || seconds <= 0 || seconds > MAX_PROFILE_SECONDS) {
          return text(res, 400, `seconds must be an integer from 1 to ${MAX_PROFILE_SECONDS}\n`);
        }
        cpuProfile(seconds).then(
          (profile) => {
            res.writeHead(200, {
              'content-type': 'application/json',
              'content-disposition': 'attachment; filename="ratelimit.cpuprofile"',
            });
            res.end(JSON.stringify(profile));
          },
          (error: Error) => text(res, 409, `Could not enable CPU profiling: ${error.message}\n`),
        );
        return;
      }
      case '/debug/pprof/heap': {
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-disposition': 'attachment; filename="ratelimit.heapsnapshot"',
        });
        getHeapSnapshot().pipe(res);
        return;
      }
      default:
        return text(res, 404, '404 page not found\n');
    }
  });
  return listen(server, settings.port, settings.host);
}
