import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { startTcpFront, type TcpFront } from '@platform/testkit/front';
import { afterEach, describe, expect, it } from 'vitest';
import { backoffDelayMs, XdsConfigClient } from '../../src/runtime/xds/client.js';
import { rateLimitConfigToYamlObject, type YamlConfig } from '../../src/runtime/xds/convert.js';
import { RATELIMIT_CONFIG_TYPE_URL } from '../../src/runtime/xds/protos.js';
import { parseObservabilitySettings } from '../../src/settings/observability.js';
import { type ManagementServer, startManagementServer } from './ads-server.js';
import { makeCa, makeLeaf } from './certs.js';

const snapshot1 = [
  {
    name: 'rl',
    domain: 'rl',
    descriptors: [{ key: 'foo', rate_limit: { unit: 'MINUTE', requests_per_unit: 10 } }],
  },
];
const badSnapshot = [{ name: 'broken', domain: '', descriptors: [] }];
const snapshot2 = [
  {
    name: 'rl',
    domain: 'rl',
    descriptors: [
      {
        key: 'foo',
        value: 'bar',
        rate_limit: { unit: 'SECOND', requests_per_unit: 1, name: 'r1' },
        shadow_mode: true,
      },
      { key: 'open', rate_limit: { unlimited: true } },
    ],
  },
  {
    name: 'other',
    domain: 'other',
    descriptors: [
      { key: 'k', rate_limit: { unit: 'HOUR', requests_per_unit: 5, replaces: [{ name: 'r1' }] } },
    ],
  },
];

let client: XdsConfigClient | undefined;
let mgmt: ManagementServer | undefined;
// The client's address when the server restarts or starts late: owned by this test process, so no
// other process can take the port while the management server is down (connections are reset).
let front: TcpFront | undefined;
afterEach(async () => {
  await client?.stop();
  mgmt?.stop();
  await front?.close();
  client = undefined;
  mgmt = undefined;
  front = undefined;
});

describe('xDS configuration client against an ADS management server', () => {
  it('applies good snapshots all-or-nothing, ACKs them, NACKs a bad one with its error, and resumes after a server restart', async () => {
    front = await startTcpFront();
    mgmt = await startManagementServer();
    front.target(mgmt.port);
    const settings = parseObservabilitySettings({
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${front.port}`,
      CONFIG_GRPC_XDS_NODE_ID: 'node-7',
      CONFIG_GRPC_XDS_NODE_METADATA: 'region=eu-west,team=edge,skipped',
      CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: 'x-tenant:blue,authorization:Bearer t0k',
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '50ms',
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: '200ms',
      CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: '500ms',
    });
    let applied: YamlConfig[][] = [];
    client = new XdsConfigClient({
      settings: settings.xds,
      apply(configs) {
        const yaml = configs.map(rateLimitConfigToYamlObject);
        // the core's validator: a config without a domain is rejected (whole snapshot)
        for (const c of yaml)
          if (c.domain === '') throw new Error('broken: config file cannot have empty domain');
        applied.push(yaml);
      },
    });
    client.start();

    const [subscribe] = await mgmt.waitForRequests(1);
    expect(subscribe).toMatchObject({
      type_url: RATELIMIT_CONFIG_TYPE_URL,
      version_info: '',
      response_nonce: '',
      resource_names: [],
    });
    expect(subscribe?.node?.id).toBe('node-7');
    expect(subscribe?.node?.metadata).toEqual({
      fields: { region: { stringValue: 'eu-west' }, team: { stringValue: 'edge' } },
    });
    expect(mgmt.headers[0]).toMatchObject({ 'x-tenant': 'blue', authorization: 'Bearer t0k' });

    mgmt.push('1', snapshot1);
    const ack1 = (await mgmt.waitForRequests(2))[1];
    expect(ack1).toMatchObject({ version_info: '1', response_nonce: 'nonce-1' });
    expect(ack1?.error_detail ?? null).toBeNull();
    await client.firstApplied;
    expect(applied).toEqual([
      [
        {
          domain: 'rl',
          descriptors: [{ key: 'foo', rate_limit: { unit: 'MINUTE', requests_per_unit: 10 } }],
        },
      ],
    ]);

    mgmt.push('bad', [...snapshot1, ...badSnapshot]);
    const nack = (await mgmt.waitForRequests(3))[2];
    expect(nack).toMatchObject({
      version_info: '1',
      response_nonce: 'nonce-2',
      error_detail: { code: 3, message: 'broken: config file cannot have empty domain' },
    });
    expect(applied).toHaveLength(1);

    mgmt.push('2', snapshot2);
    const ack2 = (await mgmt.waitForRequests(4))[3];
    expect(ack2).toMatchObject({ version_info: '2', response_nonce: 'nonce-3' });
    expect(applied[1]).toEqual([
      {
        domain: 'rl',
        descriptors: [
          {
            key: 'foo',
            value: 'bar',
            rate_limit: { unit: 'SECOND', requests_per_unit: 1, name: 'r1' },
            shadow_mode: true,
          },
          { key: 'open', rate_limit: { unlimited: true } },
        ],
      },
      {
        domain: 'other',
        descriptors: [
          { key: 'k', rate_limit: { unit: 'HOUR', requests_per_unit: 5, replaces: [{ name: 'r1' }] } },
        ],
      },
    ]);

    // restart the management server behind the same address: the client reconnects and
    // resubscribes with the last ACKed version, then takes the next snapshot
    front.target(undefined);
    mgmt.stop();
    applied = [];
    mgmt = await startManagementServer();
    front.target(mgmt.port);
    const [resubscribe] = await mgmt.waitForRequests(1);
    expect(resubscribe).toMatchObject({
      version_info: '2',
      response_nonce: '',
      type_url: RATELIMIT_CONFIG_TYPE_URL,
    });
    expect(resubscribe?.node?.id).toBe('node-7');
    mgmt.push('3', snapshot1);
    expect((await mgmt.waitForRequests(2))[1]).toMatchObject({ version_info: '3' });
    expect(applied).toHaveLength(1);
    expect(client.ackedVersion).toBe('3');
  });

  it('keeps retrying while the server is down and connects when it comes up', async () => {
    front = await startTcpFront();
    const settings = parseObservabilitySettings({
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${front.port}`,
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '20ms',
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: '100ms',
      CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: '100ms',
    });
    const warnings: string[] = [];
    client = new XdsConfigClient({
      settings: settings.xds,
      apply: () => {},
      log: { info: () => {}, warn: (_o, m) => warnings.push(m) },
    });
    client.start();
    while (warnings.length < 2) await new Promise((r) => setTimeout(r, 20));
    expect(warnings[0]).toBe('xds: configuration server not reachable');
    mgmt = await startManagementServer();
    front.target(mgmt.port);
    await mgmt.waitForRequests(1);
    mgmt.push('1', snapshot1);
    await client.firstApplied;
  });
});

describe('xDS client over TLS', () => {
  it('verifies the server against CONFIG_GRPC_XDS_SERVER_TLS_CACERT with the SAN override and presents its client certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rl-xds-tls-'));
    try {
      const ca = makeCa(dir, 'xds-ca');
      const serverCert = makeLeaf(dir, ca, 'xds-server', 'xds', 'DNS:xds.internal', 'serverAuth');
      const clientCert = makeLeaf(dir, ca, 'xds-client', 'ratelimit', 'DNS:ratelimit.internal', 'clientAuth');
      const serverCreds = grpc.ServerCredentials.createSsl(
        readFileSync(ca.cert),
        [{ private_key: readFileSync(serverCert.key), cert_chain: readFileSync(serverCert.cert) }],
        true,
      );
      mgmt = await startManagementServer(serverCreds);
      const settings = parseObservabilitySettings({
        CONFIG_TYPE: 'GRPC_XDS_SOTW',
        CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${mgmt.port}`,
        CONFIG_GRPC_XDS_SERVER_USE_TLS: 'true',
        CONFIG_GRPC_XDS_SERVER_TLS_CACERT: ca.cert,
        CONFIG_GRPC_XDS_SERVER_TLS_SAN: 'xds.internal',
        CONFIG_GRPC_XDS_CLIENT_TLS_CERT: clientCert.cert,
        CONFIG_GRPC_XDS_CLIENT_TLS_KEY: clientCert.key,
        XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '50ms',
        XDS_CLIENT_BACKOFF_MAX_INTERVAL: '100ms',
      });
      const applied: unknown[] = [];
      client = new XdsConfigClient({ settings: settings.xds, apply: (c) => applied.push(c) });
      client.start();
      await mgmt.waitForRequests(1);
      mgmt.push('1', snapshot1);
      await client.firstApplied;
      expect(applied).toHaveLength(1);
      expect(
        () =>
          new XdsConfigClient({
            settings: { ...settings.xds, serverCaFile: join(dir, 'missing.pem') },
            apply: () => {},
          }),
      ).toThrow(/^CONFIG_GRPC_XDS_SERVER_TLS_CACERT: cannot read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('backoff', () => {
  const s = { backoffInitialMs: 10_000, backoffMaxMs: 60_000, backoffJitter: true, backoffRandomFactor: 0.5 };
  it('grows exponentially up to the maximum', () => {
    const noJitter = { ...s, backoffJitter: false };
    expect([0, 1, 2, 3, 4, 5, 10].map((a) => backoffDelayMs(a, noJitter, Math.random))).toEqual([
      10_000, 15_000, 22_500, 33_750, 50_625, 60_000, 60_000,
    ]);
  });
  it('spreads the wait over +/- the random factor', () => {
    expect(backoffDelayMs(0, s, () => 0)).toBe(5_000);
    expect(backoffDelayMs(0, s, () => 0.5)).toBe(10_000);
    expect(backoffDelayMs(0, s, () => 1)).toBe(15_000);
  });
});
