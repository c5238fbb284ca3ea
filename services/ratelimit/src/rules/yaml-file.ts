import { type GoNode, goFormat, readYamlV2, YamlV2Error } from './yaml-v2.js';

/**
 * Parsing and key validation of one rate-limit YAML file, as the reference does it
 * (`config_impl.go` `ConfigFileContentToYaml`): a first pass over the file as a generic map checks
 * every key (`validateYamlKeys`), then the file is decoded into the typed structs, collecting every
 * type error as yaml.v2 does. Same error texts (design/ratelimit-reference.md, "Config").
 * Pure: text in, typed tree or error message out.
 */
export interface YamlRateLimit {
  unit: string;
  requestsPerUnit: number;
  unlimited: boolean;
  name: string;
  replaces: string[];
  /** `algorithm` ('' when absent: the fixed window). Not in the reference. */
  algorithm: string;
  /** `unit_multiplier` (undefined when absent). Not in the reference. */
  unitMultiplier: number | undefined;
  /** `burst` (undefined when absent). Not in the reference. */
  burst: number | undefined;
}

/** A JSON-like value of a descriptor's `metadata` (becomes a google.protobuf.Struct). */
export type MetadataValue =
  | string
  | number
  | boolean
  | null
  | MetadataValue[]
  | { [key: string]: MetadataValue };

export interface YamlDescriptor {
  key: string;
  value: string;
  rateLimit?: YamlRateLimit | undefined;
  descriptors: YamlDescriptor[];
  shadowMode: boolean;
  quotaMode: boolean;
  detailedMetric: boolean;
  valueToMetric: boolean;
  shareThreshold: boolean;
  /** Undefined when absent or empty (the reference's `len(yamlMetadata) == 0`). */
  metadata: { [key: string]: MetadataValue } | undefined;
}

export interface YamlRoot {
  domain: string;
  descriptors: YamlDescriptor[];
}

export type YamlParseResult = { ok: true; root: YamlRoot } | { ok: false; error: string };

/** The reference's `validKeys`. */
const VALID_KEYS = new Set([
  'domain',
  'key',
  'value',
  'descriptors',
  'rate_limit',
  'unit',
  'requests_per_unit',
  'unlimited',
  'shadow_mode',
  'quota_mode',
  'name',
  'replaces',
  'detailed_metric',
  'value_to_metric',
  'share_threshold',
  'metadata',
]);

/** Keys of ours (issue 42), valid only inside a `rate_limit` block: elsewhere they are unknown keys. */
const RATE_LIMIT_ONLY_KEYS = new Set(['algorithm', 'unit_multiplier', 'burst']);

class ConfigFileError extends Error {}

/**
 * The reference's `validateYamlKeys` over the generic map; `inRateLimit` while inside a
 * `rate_limit` block, where our own keys are also valid.
 */
function validateKeys(map: GoNode & { kind: 'map' }, inRateLimit = false): void {
  for (const [k, v] of map.pairs) {
    if (k.kind !== 'scalar' || k.type !== 'str') {
      throw new ConfigFileError(`config error, key is not of type string: ${goFormat(k)}`);
    }
    if (!VALID_KEYS.has(k.text) && !(inRateLimit && RATE_LIMIT_ONLY_KEYS.has(k.text)))
      throw new ConfigFileError(`config error, unknown key '${k.text}'`);
    // Metadata keys and values are arbitrary (checked when converted).
    if (k.text === 'metadata') continue;
    if (v.kind === 'seq') {
      for (const e of v.items) {
        if (e.kind !== 'map') {
          throw new ConfigFileError(
            `config error, yaml file contains list of type other than map: ${goFormat(e)}`,
          );
        }
        validateKeys(e);
      }
    } else if (v.kind === 'map') {
      validateKeys(v, k.text === 'rate_limit');
    } else if (v.type === 'float') {
      // The reference accepts only string, int, bool and nil leaves.
      throw new ConfigFileError('error checking config');
    } else if (v.type === 'int' && !Number.isSafeInteger(Number(v.value)) && Number(v.value) > 2 ** 63 - 1) {
      // Above int64 yaml.v2 decodes a uint64: not a leaf type the reference accepts.
      throw new ConfigFileError('error checking config');
    }
  }
}

const SHORT_TAG: Record<string, string> = {
  str: '!!str',
  int: '!!int',
  float: '!!float',
  bool: '!!bool',
  null: '!!null',
};

/** yaml.v2's typed decoding: type errors are collected (`line N: cannot unmarshal ...`), decoding goes on. */
class Decoder {
  readonly errors: string[] = [];

  private terror(n: GoNode, into: string): void {
    const tag = n.kind === 'scalar' ? SHORT_TAG[n.type]! : n.kind === 'seq' ? '!!seq' : '!!map';
    let value = '';
    if (n.kind === 'scalar') value = n.text.length > 10 ? ` \`${n.text.slice(0, 7)}...\`` : ` \`${n.text}\``;
    this.errors.push(`line ${n.line}: cannot unmarshal ${tag}${value} into ${into}`);
  }

  private isNull(n: GoNode | undefined): boolean {
    return n === undefined || (n.kind === 'scalar' && n.type === 'null');
  }

  fields(n: GoNode, into: string): Map<string, GoNode> | undefined {
    if (n.kind !== 'map') {
      this.terror(n, into);
      return undefined;
    }
    const out = new Map<string, GoNode>();
    for (const [k, v] of n.pairs) if (k.kind === 'scalar') out.set(k.text, v);
    return out;
  }

  string(n: GoNode | undefined): string {
    if (n === undefined || this.isNull(n)) return '';
    if (n.kind !== 'scalar') {
      this.terror(n, 'string');
      return '';
    }
    return n.text;
  }

  bool(n: GoNode | undefined): boolean {
    if (n === undefined || this.isNull(n)) return false;
    if (n.kind !== 'scalar' || n.type !== 'bool') {
      this.terror(n, 'bool');
      return false;
    }
    return n.value as boolean;
  }

  /** A uint32 that may be absent (undefined), for keys whose default depends on others. */
  optionalUint32(n: GoNode | undefined): number | undefined {
    if (n === undefined || this.isNull(n)) return undefined;
    return this.uint32(n);
  }

  uint32(n: GoNode | undefined): number {
    if (n === undefined || this.isNull(n)) return 0;
    if (n.kind !== 'scalar' || (n.type !== 'int' && n.type !== 'float')) {
      this.terror(n, 'uint32');
      return 0;
    }
    const v = Number(n.value);
    if (!(v >= 0 && v <= 4294967295)) {
      this.terror(n, 'uint32');
      return 0;
    }
    return Math.trunc(v);
  }

  list(n: GoNode | undefined, into: string): GoNode[] {
    if (n === undefined || this.isNull(n)) return [];
    if (n.kind !== 'seq') {
      this.terror(n, into);
      return [];
    }
    return n.items;
  }

  metadata(n: GoNode | undefined): YamlDescriptor['metadata'] {
    if (n === undefined || this.isNull(n)) return undefined;
    if (n.kind !== 'map') {
      this.terror(n, 'map[string]interface {}');
      return undefined;
    }
    const out: { [key: string]: MetadataValue } = {};
    for (const [k, v] of n.pairs) {
      if (k.kind !== 'scalar') {
        this.terror(k, 'string');
        continue;
      }
      out[k.text] = toMetadataValue(v);
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }

  rateLimit(n: GoNode): YamlRateLimit | undefined {
    const f = this.fields(n, 'config.YamlRateLimit');
    if (!f) return undefined;
    return {
      unit: this.string(f.get('unit')),
      requestsPerUnit: this.uint32(f.get('requests_per_unit')),
      unlimited: this.bool(f.get('unlimited')),
      name: this.string(f.get('name')),
      replaces: this.list(f.get('replaces'), '[]config.yamlReplaces').map((r) => {
        const rf = this.fields(r, 'config.yamlReplaces');
        return rf ? this.string(rf.get('name')) : '';
      }),
      algorithm: this.string(f.get('algorithm')),
      unitMultiplier: this.optionalUint32(f.get('unit_multiplier')),
      burst: this.optionalUint32(f.get('burst')),
    };
  }

  descriptor(n: GoNode): YamlDescriptor {
    const f = this.fields(n, 'config.YamlDescriptor') ?? new Map<string, GoNode>();
    const rl = f.get('rate_limit');
    return {
      key: this.string(f.get('key')),
      value: this.string(f.get('value')),
      rateLimit: rl === undefined || this.isNull(rl) ? undefined : this.rateLimit(rl),
      descriptors: this.list(f.get('descriptors'), '[]config.YamlDescriptor').map((d) => this.descriptor(d)),
      shadowMode: this.bool(f.get('shadow_mode')),
      quotaMode: this.bool(f.get('quota_mode')),
      detailedMetric: this.bool(f.get('detailed_metric')),
      valueToMetric: this.bool(f.get('value_to_metric')),
      shareThreshold: this.bool(f.get('share_threshold')),
      metadata: this.metadata(f.get('metadata')),
    };
  }
}

function toMetadataValue(n: GoNode): MetadataValue {
  if (n.kind === 'seq') return n.items.map(toMetadataValue);
  if (n.kind === 'map') {
    const out: { [key: string]: MetadataValue } = {};
    // The reference turns nested keys into strings with %v.
    for (const [k, v] of n.pairs) out[goFormat(k)] = toMetadataValue(v);
    return out;
  }
  return n.type === 'null' ? null : n.type === 'str' ? n.text : (n.value as number | boolean);
}

/** yaml.v2 meets the fields in file order; ours are decoded field by field, so order by line (stable). */
function unmarshalErrors(errors: readonly string[]): ConfigFileError {
  const line = (e: string): number => Number(/^line (\d+):/.exec(e)?.[1] ?? 0);
  const ordered = [...errors].sort((a, b) => line(a) - line(b));
  return new ConfigFileError(`error loading config file: yaml: unmarshal errors:\n  ${ordered.join('\n  ')}`);
}

/** Parses one config file's text. The caller prefixes errors with the config name. */
export function parseConfigFile(text: string): YamlParseResult {
  try {
    let root: GoNode;
    try {
      root = readYamlV2(text);
    } catch (error) {
      if (error instanceof YamlV2Error)
        throw new ConfigFileError(`error loading config file: ${error.message}`);
      throw error;
    }
    if (root.kind === 'scalar' && root.type === 'null')
      return { ok: true, root: { domain: '', descriptors: [] } };
    const decoder = new Decoder();
    if (root.kind !== 'map') {
      decoder.fields(root, 'map[interface {}]interface {}');
      throw unmarshalErrors(decoder.errors);
    }
    validateKeys(root);
    const f = decoder.fields(root, 'config.YamlRoot')!;
    const parsed: YamlRoot = {
      domain: decoder.string(f.get('domain')),
      descriptors: decoder
        .list(f.get('descriptors'), '[]config.YamlDescriptor')
        .map((d) => decoder.descriptor(d)),
    };
    if (decoder.errors.length > 0) throw unmarshalErrors(decoder.errors);
    return { ok: true, root: parsed };
  } catch (error) {
    if (error instanceof ConfigFileError) return { ok: false, error: error.message };
    throw error;
  }
}
