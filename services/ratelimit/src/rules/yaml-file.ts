import { isAlias, isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, type Scalar } from 'yaml';

/**
 * Parsing and key validation of one rate-limit YAML file, with the reference implementation's error
 * texts (design/ratelimit-reference.md, "Config"). YAML 1.1 like the reference's parser, so `yes`/`no`
 * are booleans and a scalar written as a number (`value: 200`) is still a valid string field.
 * Pure: text in, typed tree or error message out.
 */
export interface YamlRateLimit {
  unit: string;
  requestsPerUnit: number;
  unlimited: boolean;
  name: string;
  replaces: string[];
}

export interface YamlDescriptor {
  key: string;
  value: string;
  rateLimit?: YamlRateLimit | undefined;
  descriptors: YamlDescriptor[];
  shadowMode: boolean;
  detailedMetric: boolean;
}

export interface YamlRoot {
  domain: string;
  descriptors: YamlDescriptor[];
}

export type YamlParseResult = { ok: true; root: YamlRoot } | { ok: false; error: string };

const VALID_KEYS = new Set([
  'domain',
  'key',
  'value',
  'descriptors',
  'rate_limit',
  'unit',
  'requests_per_unit',
  'unlimited',
  'name',
  'replaces',
  'detailed_metric',
  'shadow_mode',
  'quota_mode',
]);

class ConfigFileError extends Error {}

function scalarText(node: Scalar): string {
  if (node.value === null || node.value === undefined) return '';
  return typeof node.source === 'string' ? node.source : String(node.value);
}

/** The reference's first pass: every map key is a known string; list elements are maps. */
function validateKeys(node: Node | null, counter: LineCounter): void {
  if (node === null || !isMap(node)) return;
  for (const pair of node.items) {
    const key = pair.key as Node | null;
    if (!isScalar(key) || typeof key.value !== 'string') {
      const shown = isScalar(key) ? scalarText(key) : String(key);
      throw new ConfigFileError(`config error, key is not of type string: ${shown}`);
    }
    if (!VALID_KEYS.has(key.value)) throw new ConfigFileError(`config error, unknown key '${key.value}'`);
    const value = pair.value as Node | null;
    if (isSeq(value)) {
      for (const element of value.items as (Node | null)[]) {
        if (!isMap(element)) {
          const shown = isScalar(element) ? scalarText(element) : String(element);
          throw new ConfigFileError(`config error, yaml file contains list of type other than map: ${shown}`);
        }
        validateKeys(element, counter);
      }
    } else if (isMap(value)) {
      validateKeys(value, counter);
    } else if (isAlias(value)) {
      throw new ConfigFileError('error checking config');
    }
  }
}

function where(node: Node, counter: LineCounter): string {
  const offset = node.range?.[0];
  return offset === undefined ? '' : `line ${counter.linePos(offset).line}: `;
}

function unmarshalError(node: Node, counter: LineCounter, into: string): ConfigFileError {
  const tag = isScalar(node)
    ? typeof node.value === 'string'
      ? '!!str'
      : typeof node.value === 'number'
        ? '!!int'
        : '!!bool'
    : isSeq(node)
      ? '!!seq'
      : '!!map';
  const text = isScalar(node) ? ` \`${scalarText(node)}\`` : '';
  return new ConfigFileError(
    `error loading config file: yaml: unmarshal errors:\n  ${where(node, counter)}cannot unmarshal ${tag}${text} into ${into}`,
  );
}

function fieldsOf(node: Node, counter: LineCounter, into: string): Map<string, Node | null> {
  if (!isMap(node)) throw unmarshalError(node, counter, into);
  const out = new Map<string, Node | null>();
  for (const pair of node.items) out.set(String((pair.key as Scalar).value), pair.value as Node | null);
  return out;
}

function asString(node: Node | null | undefined, counter: LineCounter): string {
  if (node === null || node === undefined) return '';
  if (!isScalar(node)) throw unmarshalError(node, counter, 'string');
  return scalarText(node);
}

function asBool(node: Node | null | undefined, counter: LineCounter): boolean {
  if (node === null || node === undefined) return false;
  if (isScalar(node) && node.value === null) return false;
  if (!isScalar(node) || typeof node.value !== 'boolean') throw unmarshalError(node, counter, 'bool');
  return node.value;
}

function asUint32(node: Node | null | undefined, counter: LineCounter): number {
  if (node === null || node === undefined) return 0;
  if (isScalar(node) && node.value === null) return 0;
  if (!isScalar(node)) throw unmarshalError(node, counter, 'uint32');
  const v = node.value;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 4294967295) {
    throw unmarshalError(node, counter, 'uint32');
  }
  return v;
}

function asList(node: Node | null | undefined, counter: LineCounter, into: string): Node[] {
  if (node === null || node === undefined) return [];
  if (isScalar(node) && node.value === null) return [];
  if (!isSeq(node)) throw unmarshalError(node, counter, into);
  return node.items as Node[];
}

function toRateLimit(node: Node, counter: LineCounter): YamlRateLimit {
  const f = fieldsOf(node, counter, 'config.YamlRateLimit');
  return {
    unit: asString(f.get('unit'), counter),
    requestsPerUnit: asUint32(f.get('requests_per_unit'), counter),
    unlimited: asBool(f.get('unlimited'), counter),
    name: asString(f.get('name'), counter),
    replaces: asList(f.get('replaces'), counter, '[]config.yamlReplaces').map((r) =>
      asString(fieldsOf(r, counter, 'config.yamlReplaces').get('name'), counter),
    ),
  };
}

function toDescriptor(node: Node, counter: LineCounter): YamlDescriptor {
  const f = fieldsOf(node, counter, 'config.YamlDescriptor');
  const rateLimitNode = f.get('rate_limit');
  const hasRateLimit =
    rateLimitNode !== undefined &&
    rateLimitNode !== null &&
    !(isScalar(rateLimitNode) && rateLimitNode.value === null);
  return {
    key: asString(f.get('key'), counter),
    value: asString(f.get('value'), counter),
    rateLimit: hasRateLimit ? toRateLimit(rateLimitNode, counter) : undefined,
    descriptors: asList(f.get('descriptors'), counter, '[]config.YamlDescriptor').map((d) =>
      toDescriptor(d, counter),
    ),
    shadowMode: asBool(f.get('shadow_mode'), counter),
    detailedMetric: asBool(f.get('detailed_metric'), counter),
  };
}

/** Parses one config file's text. The caller prefixes errors with the config name. */
export function parseConfigFile(text: string): YamlParseResult {
  const counter = new LineCounter();
  const doc = parseDocument(text, {
    version: '1.1',
    uniqueKeys: true,
    lineCounter: counter,
    prettyErrors: true,
  });
  const first = doc.errors[0];
  if (first) {
    return {
      ok: false,
      error: `error loading config file: yaml: ${first.message.split('\n')[0]!.replace(/:$/, '')}`,
    };
  }
  try {
    const contents = doc.contents as Node | null;
    if (contents === null || (isScalar(contents) && contents.value === null)) {
      return { ok: true, root: { domain: '', descriptors: [] } };
    }
    if (!isMap(contents)) throw unmarshalError(contents, counter, 'map[interface {}]interface {}');
    validateKeys(contents, counter);
    const f = fieldsOf(contents, counter, 'config.YamlRoot');
    return {
      ok: true,
      root: {
        domain: asString(f.get('domain'), counter),
        descriptors: asList(f.get('descriptors'), counter, '[]config.YamlDescriptor').map((d) =>
          toDescriptor(d, counter),
        ),
      },
    };
  } catch (error) {
    if (error instanceof ConfigFileError) return { ok: false, error: error.message };
    throw error;
  }
}
