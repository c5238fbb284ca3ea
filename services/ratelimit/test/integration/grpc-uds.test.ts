import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/app.js';
import { callShouldRateLimit } from '../../src/cli/client.js';
import { parseSettings } from '../../src/config.js';
import { Code } from '../../src/proto/messages.js';
import { bindGrpc, grpcAddress } from '../../src/transport/grpc-server.js';
import { HEALTH_NOT_SERVING, HEALTH_SERVICE, HEALTH_SERVING } from '../../src/transport/grpc-services.js';

describe('gRPC on a unix socket (GRPC_UDS) and the health Watch stream', () => {
  let app: App;
  let address: string;
  beforeAll(async () => {
    const socket = join(mkdtempSync(join(tmpdir(), 'rl-uds-')), 'ratelimit.sock');
    // No RUNTIME_ROOT: the bundled example config.
    const settings = parseSettings({ GRPC_UDS: socket });
    app = buildApp(settings, { logger: pino({ level: 'silent' }) });
    await app.prepare();
    address = grpcAddress(settings.server.grpcHost, settings.server.grpcPort, settings.server.grpcUds);
    expect(address).toBe(`unix:${socket}`);
    await bindGrpc(app.grpcServer, address, grpc.ServerCredentials.createInsecure());
  });
  afterAll(async () => {
    await app.close(2000);
  });

  it('answers ShouldRateLimit over the socket', async () => {
    const r = await callShouldRateLimit(address, {
      domain: 'example',
      descriptors: [{ entries: [{ key: 'user', value: 'uds' }] }],
      hitsAddend: 0,
    });
    expect(r.overallCode).toBe(Code.OK);
    expect(r.statuses[0]!.currentLimit).toMatchObject({ requestsPerUnit: 3, unit: 2 });
  });

  it('Watch streams the current status, then every change', async () => {
    const Client = grpc.makeGenericClientConstructor(HEALTH_SERVICE, 'Health');
    const client = new Client(address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      Watch(r: { service: string }): grpc.ClientReadableStream<{ status: number }>;
    };
    const stream = client.Watch({ service: 'ratelimit' });
    stream.on('error', () => {}); // the CANCELLED status after cancel()
    const seen: number[] = [];
    const next = () =>
      new Promise<void>((resolve) =>
        stream.once('data', (m: { status: number }) => resolve(void seen.push(m.status))),
      );
    await next();
    const changed = next();
    app.health.set('backend', false);
    await changed;
    expect(seen).toEqual([HEALTH_SERVING, HEALTH_NOT_SERVING]);
    app.health.set('backend', true);
    stream.cancel();
    client.close();
  });
});
