/**
 * What the build benchmark needs to know about each service beyond its `platform` field: the settings
 * that choose its ports (each run gets free ones) and the cheap request its load burst repeats.
 */
export interface BenchTarget {
  /** Environment variables set to a free port each; the first is the HTTP port the health URL uses. */
  portSettings: string[];
  /** Extra settings: loopback only, no statsd traffic. */
  env?: Record<string, string>;
  /** The request of the load burst, on the HTTP port; the health route when absent. */
  load?: { method: 'POST'; path: string; body: string; contentType: string };
}

export const TARGETS: Record<string, BenchTarget> = {
  ratelimit: {
    portSettings: ['PORT', 'GRPC_PORT', 'DEBUG_PORT'],
    env: { USE_STATSD: 'false' },
    // ShouldRateLimit through the HTTP/JSON gateway, on a rule of the bundled example config.
    load: {
      method: 'POST',
      path: '/json',
      contentType: 'application/json',
      body: JSON.stringify({
        domain: 'example',
        descriptors: [{ entries: [{ key: 'user', value: 'bench' }] }],
      }),
    },
  },
  exchange: { portSettings: ['PORT'] },
  events: { portSettings: ['PORT'] },
  'blog-graphql': {
    portSettings: ['PORT'],
    load: {
      method: 'POST',
      path: '/graphql',
      contentType: 'application/json',
      body: JSON.stringify({ query: '{ __typename }' }),
    },
  },
  'graphql-proxy': { portSettings: ['PORT'] },
  paygate: { portSettings: ['PORT'] },
};
