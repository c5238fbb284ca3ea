import { readFileSync } from 'node:fs';
import {
  type ChannelCredentials,
  type ChannelOptions,
  Client,
  type ClientDuplexStream,
  credentials,
  Metadata,
} from '@grpc/grpc-js';
import type { XdsSettings } from '../../settings/observability.js';
import {
  ADS_METHOD_PATH,
  type DiscoveryRequestMessage,
  type DiscoveryResponseMessage,
  decodeRateLimitConfig,
  decodeResponse,
  encodeRequest,
  RATELIMIT_CONFIG_TYPE_URL,
  type RateLimitConfigMessage,
} from './protos.js';

/**
 * Configuration server mode (`CONFIG_TYPE=GRPC_XDS_SOTW`): an aggregated discovery (ADS) client,
 * state of the world, subscribed to every `RateLimitConfig` resource (wildcard). Each response is
 * a full snapshot handed to `apply` all at once: when `apply` returns, the version is ACKed; when
 * it throws, the snapshot is NACKed with the error text in `error_detail` and the previous
 * configuration stays (the caller's all-or-nothing reload). A broken stream or an unreachable
 * server is retried with exponential backoff (`XDS_CLIENT_BACKOFF_*`); each connection attempt
 * waits up to `CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL` for the channel to be ready.
 */
export interface XdsLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface XdsClientOptions {
  readonly settings: XdsSettings;
  /** Applies a whole snapshot; throws to reject it (the message becomes the NACK text). */
  readonly apply: (configs: RateLimitConfigMessage[]) => void;
  readonly log?: XdsLog;
  /** Source of randomness for the backoff jitter. @default Math.random */
  readonly random?: () => number;
}

/** Growth of the retry interval per failed attempt (as the reference's exponential backoff). */
export const BACKOFF_MULTIPLIER = 1.5;

/**
 * The wait before retry number `attempt` (0-based): `initial * 1.5^attempt` capped at the maximum,
 * then, with jitter, spread uniformly over +/- `randomFactor` of that value.
 */
export function backoffDelayMs(
  attempt: number,
  s: Pick<XdsSettings, 'backoffInitialMs' | 'backoffMaxMs' | 'backoffJitter' | 'backoffRandomFactor'>,
  random: () => number,
): number {
  const base = Math.min(s.backoffMaxMs, s.backoffInitialMs * BACKOFF_MULTIPLIER ** attempt);
  if (!s.backoffJitter) return base;
  const delta = s.backoffRandomFactor * base;
  return base - delta + random() * 2 * delta;
}

function readSetting(setting: string, path: string | undefined): Buffer | null {
  if (path === undefined) return null;
  try {
    return readFileSync(path);
  } catch (error) {
    throw new Error(`${setting}: cannot read ${path}: ${(error as Error).message}`);
  }
}

/** Channel credentials and options for the settings (TLS, client certificate, SAN override, message size). */
export function xdsChannel(settings: XdsSettings): { creds: ChannelCredentials; options: ChannelOptions } {
  const options: ChannelOptions = { 'grpc.max_receive_message_length': settings.maxMsgSizeBytes };
  if (!settings.useTls) return { creds: credentials.createInsecure(), options };
  const ca = readSetting('CONFIG_GRPC_XDS_SERVER_TLS_CACERT', settings.serverCaFile);
  const key = readSetting('CONFIG_GRPC_XDS_CLIENT_TLS_KEY', settings.clientKeyFile);
  const cert = readSetting('CONFIG_GRPC_XDS_CLIENT_TLS_CERT', settings.clientCertFile);
  if (settings.serverSan !== undefined) options['grpc.ssl_target_name_override'] = settings.serverSan;
  return { creds: credentials.createSsl(ca, key, cert), options };
}

export class XdsConfigClient {
  private readonly random: () => number;
  private readonly channel: { creds: ChannelCredentials; options: ChannelOptions };
  private client: Client | undefined;
  private stream: ClientDuplexStream<DiscoveryRequestMessage, DiscoveryResponseMessage> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private attempt = 0;
  private stopped = true;
  private resolveFirst: () => void = () => {};
  /** Resolves once the first snapshot has been applied. */
  readonly firstApplied: Promise<void>;
  /** The last version ACKed (sent again on reconnect); empty before the first one. */
  ackedVersion = '';

  constructor(private readonly options: XdsClientOptions) {
    this.random = options.random ?? Math.random;
    this.channel = xdsChannel(options.settings);
    this.firstApplied = new Promise((resolve) => {
      this.resolveFirst = resolve;
    });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.stream?.cancel();
    this.stream = undefined;
    this.client?.close();
    this.client = undefined;
  }

  private connect(): void {
    if (this.stopped) return;
    const { settings } = this.options;
    const client = new Client(settings.serverUrl, this.channel.creds, this.channel.options);
    this.client = client;
    client.waitForReady(Date.now() + settings.connectRetryIntervalMs, (error) => {
      if (this.stopped || this.client !== client) return;
      if (error) {
        this.options.log?.warn(
          { server: settings.serverUrl, error: error.message },
          'xds: configuration server not reachable',
        );
        this.retry(client);
        return;
      }
      this.openStream(client);
    });
  }

  private retry(client: Client): void {
    client.close();
    if (this.client === client) this.client = undefined;
    this.stream = undefined;
    if (this.stopped) return;
    const delay = backoffDelayMs(this.attempt, this.options.settings, this.random);
    this.attempt += 1;
    this.retryTimer = setTimeout(() => this.connect(), delay);
    this.retryTimer.unref();
  }

  private openStream(client: Client): void {
    const metadata = new Metadata();
    for (const [k, v] of this.options.settings.additionalHeaders) metadata.add(k, v);
    const stream = client.makeBidiStreamRequest(ADS_METHOD_PATH, encodeRequest, decodeResponse, metadata);
    this.stream = stream;
    let finished = false;
    const finish = (reason: string): void => {
      if (finished) return;
      finished = true;
      if (this.stream !== stream) return;
      this.options.log?.warn(
        { server: this.options.settings.serverUrl, reason },
        'xds: stream closed, reconnecting',
      );
      this.retry(client);
    };
    stream.on('data', (response: DiscoveryResponseMessage) => this.onResponse(stream, response));
    stream.on('error', (error: Error) => finish(error.message));
    stream.on('status', (status: { details: string }) => finish(status.details));
    stream.on('end', () => finish('stream ended'));
    stream.write({
      version_info: this.ackedVersion,
      node: {
        id: this.options.settings.nodeId,
        user_agent_name: 'ratelimit',
        metadata: {
          fields: Object.fromEntries(
            this.options.settings.nodeMetadata.map(([k, v]) => [k, { stringValue: v }]),
          ),
        },
      },
      resource_names: [],
      type_url: RATELIMIT_CONFIG_TYPE_URL,
      response_nonce: '',
    });
  }

  private onResponse(
    stream: ClientDuplexStream<DiscoveryRequestMessage, DiscoveryResponseMessage>,
    response: DiscoveryResponseMessage,
  ): void {
    // A response means the server is healthy: the next failure starts the backoff afresh.
    this.attempt = 0;
    if (response.type_url !== RATELIMIT_CONFIG_TYPE_URL) {
      this.options.log?.warn({ type_url: response.type_url }, 'xds: ignoring a response of another type');
      return;
    }
    const reply: DiscoveryRequestMessage = {
      type_url: RATELIMIT_CONFIG_TYPE_URL,
      response_nonce: response.nonce,
      resource_names: [],
    };
    try {
      const configs = response.resources.map((any) => {
        if (any.type_url !== RATELIMIT_CONFIG_TYPE_URL)
          throw new Error(`unexpected resource type '${any.type_url}'`);
        return decodeRateLimitConfig(any.value);
      });
      this.options.apply(configs);
      this.ackedVersion = response.version_info;
      stream.write({ ...reply, version_info: response.version_info });
      this.options.log?.info(
        { version: response.version_info, resources: configs.length },
        'xds: applied configuration',
      );
      this.resolveFirst();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // google.rpc.Code INVALID_ARGUMENT, as Envoy's own NACKs carry.
      stream.write({ ...reply, version_info: this.ackedVersion, error_detail: { code: 3, message } });
      this.options.log?.warn(
        { version: response.version_info, error: message },
        'xds: rejected configuration',
      );
    }
  }
}
