import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseObservabilitySettings } from '../../src/settings/observability.js';
import { buildGrpcServerCredentials, grpcServerOptions } from '../../src/transport/grpc-tls.js';
import { type CertPair, makeCa, makeLeaf } from './certs.js';

/** A tiny unary service of our own: `/test.Echo/Ping` returns the request bytes. */
const identity = (b: Buffer): Buffer => b;
const PING = '/test.Echo/Ping';
function startServer(
  credentials: grpc.ServerCredentials,
  options: grpc.ChannelOptions = {},
): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server(options);
  server.addService(
    {
      Ping: {
        path: PING,
        requestStream: false,
        responseStream: false,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    },
    {
      Ping: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) =>
        cb(null, call.request),
    },
  );
  return new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', credentials, (e, port) => (e ? reject(e) : resolve({ server, port }))),
  );
}

function ping(port: number, credentials: grpc.ChannelCredentials): Promise<string> {
  const client = new grpc.Client(`127.0.0.1:${port}`, credentials);
  return new Promise<string>((resolve, reject) => {
    client.makeUnaryRequest(
      PING,
      identity,
      identity,
      Buffer.from('hello'),
      { deadline: Date.now() + 10_000 },
      (e, res) => {
        client.close();
        if (e) reject(e);
        else resolve(res?.toString() ?? '');
      },
    );
  });
}

/** The common name of the certificate the server presents to a new TLS connection. */
function servedCommonName(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(
      { host: '127.0.0.1', port, ca: readFileSync(ca), ALPNProtocols: ['h2'], servername: 'localhost' },
      () => {
        const cn = socket.getPeerCertificate().subject.CN;
        socket.end();
        resolve(Array.isArray(cn) ? cn.join(',') : (cn ?? ''));
      },
    );
    socket.on('error', reject);
  });
}

let dir: string;
let ca: CertPair;
let otherCa: CertPair;
let serverV1: CertPair;
let serverV2: CertPair;
let goodClient: CertPair;
let wrongSanClient: CertPair;
let foreignClient: CertPair;
let running: grpc.Server | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rl-tls-'));
  ca = makeCa(dir, 'ca');
  otherCa = makeCa(dir, 'other-ca');
  serverV1 = makeLeaf(dir, ca, 'server-v1', 'server-v1', 'DNS:localhost,IP:127.0.0.1', 'serverAuth');
  serverV2 = makeLeaf(dir, ca, 'server-v2', 'server-v2', 'DNS:localhost,IP:127.0.0.1', 'serverAuth');
  goodClient = makeLeaf(dir, ca, 'client-good', 'client', 'DNS:envoy.internal', 'clientAuth');
  wrongSanClient = makeLeaf(dir, ca, 'client-wrong', 'client', 'DNS:intruder.internal', 'clientAuth');
  foreignClient = makeLeaf(dir, otherCa, 'client-foreign', 'client', 'DNS:envoy.internal', 'clientAuth');
});
afterEach(() => {
  running?.forceShutdown();
  running = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function clientCreds(client?: CertPair): grpc.ChannelCredentials {
  const root = readFileSync(ca.cert);
  return client
    ? grpc.credentials.createSsl(root, readFileSync(client.key), readFileSync(client.cert))
    : grpc.credentials.createSsl(root);
}

describe('gRPC server TLS', () => {
  it('serves TLS and picks up a swapped certificate for new connections', async () => {
    const certFile = join(dir, 'live.pem');
    const keyFile = join(dir, 'live.key');
    copyFileSync(serverV1.cert, certFile);
    copyFileSync(serverV1.key, keyFile);
    const settings = parseObservabilitySettings({
      GRPC_SERVER_USE_TLS: 'true',
      GRPC_SERVER_TLS_CERT: certFile,
      GRPC_SERVER_TLS_KEY: keyFile,
    });
    const { server, port } = await startServer(
      buildGrpcServerCredentials(settings.grpcServer, { refreshIntervalMs: 200 }),
    );
    running = server;
    expect(await ping(port, clientCreds())).toBe('hello');
    expect(await servedCommonName(port, ca.cert)).toBe('server-v1');
    await expect(ping(port, grpc.credentials.createInsecure())).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
    });

    // swap both files (write aside, then rename over the watched paths)
    copyFileSync(serverV2.cert, `${certFile}.new`);
    copyFileSync(serverV2.key, `${keyFile}.new`);
    renameSync(`${keyFile}.new`, keyFile);
    renameSync(`${certFile}.new`, certFile);
    let served = '';
    while (served !== 'server-v2') {
      await new Promise((r) => setTimeout(r, 100));
      served = await servedCommonName(port, ca.cert).catch(() => '');
    }
    expect(await ping(port, clientCreds())).toBe('hello');
  });
});

describe('gRPC mutual TLS', () => {
  async function mtlsServer(san?: string): Promise<number> {
    const settings = parseObservabilitySettings({
      GRPC_SERVER_USE_TLS: 'true',
      GRPC_SERVER_TLS_CERT: serverV1.cert,
      GRPC_SERVER_TLS_KEY: serverV1.key,
      GRPC_CLIENT_TLS_CACERT: ca.cert,
      ...(san ? { GRPC_CLIENT_TLS_SAN: san } : {}),
    });
    const { server, port } = await startServer(buildGrpcServerCredentials(settings.grpcServer));
    running = server;
    return port;
  }

  it('accepts a client certificate of the CA and refuses none or a foreign one', async () => {
    const port = await mtlsServer();
    expect(await ping(port, clientCreds(goodClient))).toBe('hello');
    await expect(ping(port, clientCreds())).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    await expect(ping(port, clientCreds(foreignClient))).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
    });
  });

  it('GRPC_CLIENT_TLS_SAN refuses a client certificate without that name', async () => {
    const port = await mtlsServer('envoy.internal');
    expect(await ping(port, clientCreds(goodClient))).toBe('hello');
    await expect(ping(port, clientCreds(wrongSanClient))).rejects.toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
      details: "client certificate does not carry the subject alternative name 'envoy.internal'",
    });
  });
});

describe('connection age', () => {
  it('maps GRPC_MAX_CONNECTION_AGE and _GRACE to grpc-js options', () => {
    const s = parseObservabilitySettings({
      GRPC_MAX_CONNECTION_AGE: '1m',
      GRPC_MAX_CONNECTION_AGE_GRACE: '5s',
    });
    expect(grpcServerOptions(s.grpcServer)).toEqual({
      'grpc.max_connection_age_ms': 60_000,
      'grpc.max_connection_age_grace_ms': 5_000,
    });
    // The reference's defaults: 24h, grace 1h; 0 disables.
    expect(grpcServerOptions(parseObservabilitySettings({}).grpcServer)).toEqual({
      'grpc.max_connection_age_ms': 86_400_000,
      'grpc.max_connection_age_grace_ms': 3_600_000,
    });
    expect(
      grpcServerOptions(
        parseObservabilitySettings({ GRPC_MAX_CONNECTION_AGE: '0', GRPC_MAX_CONNECTION_AGE_GRACE: '0' })
          .grpcServer,
      ),
    ).toEqual({});
  });

  it('an old connection gets a GOAWAY and is closed after the grace period', async () => {
    const settings = parseObservabilitySettings({
      GRPC_MAX_CONNECTION_AGE: '300ms',
      GRPC_MAX_CONNECTION_AGE_GRACE: '300ms',
    });
    const { server, port } = await startServer(
      grpc.ServerCredentials.createInsecure(),
      grpcServerOptions(settings.grpcServer),
    );
    running = server;
    const session = http2Connect(`http://127.0.0.1:${port}`);
    const goaway = new Promise<void>((resolve) => session.once('goaway', () => resolve()));
    const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
    session.on('error', () => {});
    await goaway;
    await closed;
    expect(session.closed || session.destroyed).toBe(true);
  });
});
