import { Type } from 'typebox';
import type { RouteDeps } from '../http/deps.js';
import { errorResponses, v2Paths } from '../http/schemas.js';
import type { App } from '../http/typed.js';

const ServerTime = Type.Object({
  timestamp: Type.Integer({ description: 'seconds since the Unix epoch' }),
  timestamp_miliseconds: Type.Integer({ description: 'milliseconds since the Unix epoch (spelled so)' }),
});

/** Server time: v3 object, v2 bare integer of seconds. */
export function timestampRoutes(app: App, deps: RouteDeps): void {
  app.get(
    '/v3/timestamp',
    {
      schema: {
        tags: ['v3 public'],
        summary: 'Server time',
        response: { 200: ServerTime, ...errorResponses },
      },
    },
    async () => {
      const ms = deps.now();
      return { timestamp: Math.floor(ms / 1000), timestamp_miliseconds: ms };
    },
  );
  for (const url of v2Paths('/api/v2/timestamp')) {
    app.get(
      url,
      {
        schema: {
          tags: ['v2'],
          summary: 'Server time in seconds',
          response: { 200: Type.Integer(), ...errorResponses },
        },
      },
      async () => Math.floor(deps.now() / 1000),
    );
  }
}
