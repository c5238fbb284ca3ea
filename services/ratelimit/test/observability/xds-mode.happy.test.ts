import { afterEach, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../integration/app-harness.js';
import { type ManagementServer, startManagementServer } from './ads-server.js';

/** The whole app in configuration server mode: rules come from an ADS management server. */
let mgmt: ManagementServer | undefined;
let running: RunningApp | undefined;
afterEach(async () => {
  await running?.close();
  mgmt?.stop();
  running = undefined;
  mgmt = undefined;
});

const limit = (n: number) => [
  {
    name: 'xds-example',
    domain: 'xds',
    descriptors: [{ key: 'user', rate_limit: { unit: 'MINUTE', requests_per_unit: n } }],
  },
];

async function decide(app: RunningApp, user: string): Promise<number> {
  const res = await fetch(`${app.http}/json`, {
    method: 'POST',
    body: JSON.stringify({ domain: 'xds', descriptors: [{ entries: [{ key: 'user', value: user }] }] }),
  });
  await res.text();
  return res.status;
}

describe('CONFIG_TYPE=GRPC_XDS_SOTW', () => {
  it('waits for the first snapshot, applies good ones, keeps the rules on a bad one', async () => {
    mgmt = await startManagementServer();
    const port = mgmt.port;
    const starting = startApp(
      {},
      {
        CONFIG_TYPE: 'GRPC_XDS_SOTW',
        CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${port}`,
        XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '50ms',
        XDS_CLIENT_BACKOFF_MAX_INTERVAL: '100ms',
        USE_STATSD: 'false',
        DISABLE_STATS: 'false',
      },
    );
    await mgmt.waitForRequests(1);
    mgmt.push('1', limit(2));
    running = await starting;
    const app = running;
    expect([await decide(app, 'a'), await decide(app, 'a'), await decide(app, 'a')]).toEqual([200, 200, 429]);

    mgmt.push('2', [...limit(5), { name: 'broken', domain: '' }]);
    const nack = (await mgmt.waitForRequests(3))[2];
    expect(nack?.error_detail?.message).toBe('broken: config file cannot have empty domain');
    expect(app.app.registry.counter('ratelimit.service.config_load_error').value()).toBe(1);
    expect(await decide(app, 'b')).toBe(200);
    expect(await decide(app, 'b')).toBe(200);
    expect(await decide(app, 'b')).toBe(429);

    mgmt.push('3', limit(5));
    expect((await mgmt.waitForRequests(4))[3]).toMatchObject({ version_info: '3' });
    expect(app.app.configDump()).toBe(
      'xds.user: unit=MINUTE requests_per_unit=5, shadow_mode: false, quota_mode: false\n',
    );
    expect(await decide(app, 'a')).toBe(200);
  });
});
