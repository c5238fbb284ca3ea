import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

/**
 * The messages of the configuration-server client, loaded from the `.proto` files kept next to
 * this module (field names kept in snake_case, as on the wire).
 */
export const RATELIMIT_CONFIG_TYPE_URL = 'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig';
export const ADS_METHOD_PATH =
  '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';

const PROTO_DIR = fileURLToPath(new URL('./proto/', import.meta.url));

function loadRoot(): protobuf.Root {
  const root = new protobuf.Root();
  // google/protobuf/* are protobufjs's bundled common types; the rest resolve under proto/.
  root.resolvePath = (_origin, target) =>
    target.startsWith('google/protobuf/') ? target : `${PROTO_DIR}${target}`;
  root.loadSync(
    ['envoy/service/discovery/v3/discovery.proto', 'ratelimit/config/ratelimit/v3/rls_conf.proto'],
    { keepCase: true },
  );
  root.resolveAll();
  return root;
}

const root = loadRoot();
export const DiscoveryRequest = root.lookupType('envoy.service.discovery.v3.DiscoveryRequest');
export const DiscoveryResponse = root.lookupType('envoy.service.discovery.v3.DiscoveryResponse');
export const RateLimitConfig = root.lookupType('ratelimit.config.ratelimit.v3.RateLimitConfig');

export interface AnyMessage {
  type_url: string;
  value: Uint8Array;
}

export interface DiscoveryRequestMessage {
  version_info?: string;
  node?: {
    id?: string;
    cluster?: string;
    user_agent_name?: string;
    /** google.protobuf.Struct with string values (CONFIG_GRPC_XDS_NODE_METADATA); protobufjs names its fields in camelCase. */
    metadata?: { fields?: Record<string, { stringValue?: string }> };
  };
  resource_names?: string[];
  type_url?: string;
  response_nonce?: string;
  error_detail?: { code?: number; message?: string };
}

export interface DiscoveryResponseMessage {
  version_info: string;
  resources: AnyMessage[];
  type_url: string;
  nonce: string;
}

export type RateLimitUnitName = 'UNKNOWN' | 'SECOND' | 'MINUTE' | 'HOUR' | 'DAY' | 'MONTH' | 'YEAR' | 'WEEK';

export interface RateLimitPolicyMessage {
  unit: RateLimitUnitName;
  requests_per_unit: number;
  unlimited: boolean;
  name: string;
  replaces: { name: string }[];
}

export interface RateLimitDescriptorMessage {
  key: string;
  value: string;
  rate_limit?: RateLimitPolicyMessage | null;
  descriptors: RateLimitDescriptorMessage[];
  shadow_mode: boolean;
  detailed_metric: boolean;
  quota_mode: boolean;
  /** google.protobuf.Struct (protobufjs names its fields in camelCase). */
  metadata?: WireStruct | null;
}

export interface WireValue {
  nullValue?: number | string;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: WireStruct;
  listValue?: { values?: WireValue[] };
}

export interface WireStruct {
  fields?: Record<string, WireValue>;
}

export interface RateLimitConfigMessage {
  name: string;
  domain: string;
  descriptors: RateLimitDescriptorMessage[];
}

const TO_OBJECT: protobuf.IConversionOptions = { enums: String, longs: Number, defaults: true, arrays: true };

export function encodeRequest(message: DiscoveryRequestMessage): Buffer {
  return Buffer.from(DiscoveryRequest.encode(DiscoveryRequest.fromObject(message)).finish());
}

export function decodeRequest(bytes: Buffer): DiscoveryRequestMessage {
  return DiscoveryRequest.toObject(DiscoveryRequest.decode(bytes), TO_OBJECT) as DiscoveryRequestMessage;
}

export function encodeResponse(message: Partial<DiscoveryResponseMessage>): Buffer {
  return Buffer.from(DiscoveryResponse.encode(DiscoveryResponse.fromObject(message)).finish());
}

export function decodeResponse(bytes: Buffer): DiscoveryResponseMessage {
  return DiscoveryResponse.toObject(DiscoveryResponse.decode(bytes), {
    ...TO_OBJECT,
    bytes: Buffer,
  }) as DiscoveryResponseMessage;
}

export function encodeRateLimitConfig(config: object): AnyMessage {
  const message = RateLimitConfig.fromObject(config);
  return { type_url: RATELIMIT_CONFIG_TYPE_URL, value: RateLimitConfig.encode(message).finish() };
}

export function decodeRateLimitConfig(value: Uint8Array): RateLimitConfigMessage {
  return RateLimitConfig.toObject(RateLimitConfig.decode(value), TO_OBJECT) as RateLimitConfigMessage;
}
