import { DEFAULT_QUERY_LIMITS, type QueryLimits } from '@platform/graphql-limits/limits';
import { QueryGuard } from '../../src/limits/query-guard.js';
import type { UpstreamClient } from '../../src/upstream/client.js';
import { memoryHandler } from './memory-handler.js';

/**
 * A GraphQLHandler with the default query limits in SETMODE, in memory, in front of an upstream that
 * records every call and answers `unavailable` (an accepted mutation would be queued).
 */
export async function limitedHandler(limits: QueryLimits = DEFAULT_QUERY_LIMITS) {
  const calls: string[] = [];
  const upstream: UpstreamClient = {
    post: async (request) => {
      calls.push(request.body);
      return { kind: 'unavailable', reason: 'connection refused' };
    },
    close: () => undefined,
  };
  const { handler, queue, monitor } = await memoryHandler(upstream, {
    mode: 'SETMODE',
    guard: new QueryGuard({ limits }),
  });
  return { handler, calls, queue, monitor };
}
