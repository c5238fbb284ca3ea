import {
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseAllDocuments,
  type Scalar,
  type YAMLError,
} from 'yaml';

/**
 * YAML read the way the reference's parser (gopkg.in/yaml.v2, a port of libyaml) reads it, so a
 * file means the same thing to both services and fails with the same message:
 *
 * - only the first document of a multi-document file counts;
 * - aliases are resolved (`*a` is the anchored node; its line is the anchor's), `<<` merge keys
 *   are applied in place, and a key repeated in one map keeps its last value;
 * - YAML 1.1 scalars (`yes`/`no` booleans, `0x1f` ints); every scalar keeps its source text, as
 *   yaml.v2 decodes a number into a string field with its text;
 * - syntax errors are reported as `yaml: line N: <libyaml problem>` (see `libyamlMessage`).
 *
 * The result is a small tree of Go-like values with their 1-based lines, for the decoder.
 */
export type GoType = 'str' | 'int' | 'float' | 'bool' | 'null';

export type GoNode =
  | { kind: 'map'; line: number; pairs: [GoNode, GoNode][] }
  | { kind: 'seq'; line: number; items: GoNode[] }
  | { kind: 'scalar'; line: number; type: GoType; text: string; value: string | number | boolean | null };

export class YamlV2Error extends Error {}

/** A budget of visited nodes, as yaml.v2's "excessive aliasing" guard (a billion-laughs file). */
const MAX_EXPANDED_NODES = 1_000_000;

const INT_SOURCE = /^[-+]?(0|[1-9][0-9_]*|0b[01_]+|0x[0-9a-fA-F_]+|0[0-7_]+|[1-9][0-9_]*(:[0-5]?[0-9])+)$/;

function scalarType(node: Scalar): GoType {
  const v = node.value;
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number' || typeof v === 'bigint') {
    const src = typeof node.source === 'string' ? node.source : String(v);
    return INT_SOURCE.test(src) && Number.isInteger(Number(v)) ? 'int' : 'float';
  }
  return 'str';
}

function scalarText(node: Scalar): string {
  if (node.value === null || node.value === undefined) return '';
  return typeof node.source === 'string' ? node.source : String(node.value);
}

function keyId(node: GoNode): string {
  if (node.kind !== 'scalar') return `${node.kind}@${node.line}`;
  return `${node.type}:${node.type === 'str' ? node.text : String(node.value)}`;
}

class Converter {
  private visited = 0;
  private readonly resolving = new Set<Node>();

  constructor(
    private readonly doc: Document,
    private readonly counter: LineCounter,
  ) {}

  private line(node: Node): number {
    const offset = node.range?.[0];
    return offset === undefined ? 0 : this.counter.linePos(offset).line;
  }

  private deref(node: Node): Node {
    if (!isAlias(node)) return node;
    const target = node.resolve(this.doc) as Node | undefined;
    if (target === undefined) throw new YamlV2Error(`yaml: unknown anchor '${node.source}' referenced`);
    return target;
  }

  convert(raw: Node | null): GoNode {
    if (++this.visited > MAX_EXPANDED_NODES) {
      throw new YamlV2Error('yaml: document contains excessive aliasing');
    }
    if (raw === null) return { kind: 'scalar', line: 0, type: 'null', text: '', value: null };
    if (isAlias(raw)) {
      const target = this.deref(raw);
      if (this.resolving.has(target)) {
        throw new YamlV2Error(`yaml: anchor '${raw.source}' value contains itself`);
      }
      this.resolving.add(target);
      try {
        return this.convert(target);
      } finally {
        this.resolving.delete(target);
      }
    }
    const anchored = raw.anchor !== undefined;
    if (anchored) this.resolving.add(raw);
    try {
      return this.convertNode(raw);
    } finally {
      if (anchored) this.resolving.delete(raw);
    }
  }

  private convertNode(node: Node): GoNode {
    const line = this.line(node);
    if (isScalar(node)) {
      const type = scalarType(node);
      const value =
        type === 'null' ? null : type === 'str' ? scalarText(node) : (node.value as number | boolean);
      return { kind: 'scalar', line, type, text: scalarText(node), value };
    }
    if (isSeq(node))
      return { kind: 'seq', line, items: node.items.map((i) => this.convert(i as Node | null)) };
    if (isMap(node)) {
      const pairs = new Map<string, [GoNode, GoNode]>();
      const set = (k: GoNode, v: GoNode): void => {
        pairs.set(keyId(k), [k, v]);
      };
      for (const pair of node.items) {
        const rawKey = pair.key as Node | null;
        if (isScalar(rawKey) && rawKey.source === '<<' && rawKey.type === 'PLAIN') {
          this.merge(pair.value as Node | null, set);
          continue;
        }
        set(this.convert(rawKey), this.convert(pair.value as Node | null));
      }
      return { kind: 'map', line, pairs: [...pairs.values()] };
    }
    throw new YamlV2Error('yaml: unknown node kind');
  }

  /** yaml.v2's `merge`: a map, or a sequence of maps applied last to first (earlier ones win). */
  private merge(raw: Node | null, set: (k: GoNode, v: GoNode) => void): void {
    const fail = (): never => {
      throw new YamlV2Error('yaml: map merge requires map or sequence of maps as the value');
    };
    const value = this.convert(raw);
    const apply = (m: GoNode): void => {
      if (m.kind !== 'map') fail();
      else for (const [k, v] of m.pairs) set(k, v);
    };
    if (value.kind === 'map') apply(value);
    else if (value.kind === 'seq') for (const item of [...value.items].reverse()) apply(item);
    else fail();
  }
}

/**
 * libyaml's problem text and yaml.v2's line for the errors of the `yaml` package that matter in
 * practice (each checked against libyaml). yaml.v2 prints `line N: ` with N = the 0-based line of
 * the problem, plus one for scanner errors, and no line at all when that number is 0.
 */
function libyamlMessage(error: YAMLError, text: string, counter: LineCounter): string {
  const at = error.pos[0];
  const line0 = counter.linePos(at).line - 1;
  const eofLine0 = text.split('\n').length - 1;
  const nextColonLine0 = (): number => {
    const rest = text.slice(at);
    const m = /:(\s|$)/.exec(rest);
    return m ? counter.linePos(at + m.index).line - 1 : line0;
  };
  const scanner = (l0: number, problem: string): string =>
    `yaml: ${l0 !== 0 ? `line ${l0 + 1}: ` : ''}${problem}`;
  const parser = (l0: number, problem: string): string => `yaml: ${l0 !== 0 ? `line ${l0}: ` : ''}${problem}`;
  const message = error.message;
  if (/Maximum call stack/.test(message)) return 'yaml: exceeded max depth of 10000';
  if (/^Missing closing ['"]quote/.test(message)) return scanner(eofLine0, 'found unexpected end of stream');
  if (/end with a \]/.test(message)) return parser(eofLine0, "did not find expected ',' or ']'");
  if (/end with a \}/.test(message)) return parser(eofLine0, "did not find expected ',' or '}'");
  switch (error.code) {
    case 'BLOCK_AS_IMPLICIT_KEY':
      return scanner(nextColonLine0(), 'mapping values are not allowed in this context');
    case 'TAB_AS_INDENT':
      return scanner(line0, 'found character that cannot start any token');
    case 'BAD_DQ_ESCAPE':
      return scanner(line0, 'found unknown escape character');
    case 'MULTILINE_IMPLICIT_KEY':
      return parser(line0, 'did not find expected key');
    default:
      break;
  }
  if (
    /Sequence item without - indicator/.test(message) ||
    /All (mapping|sequence) items must start/.test(message)
  ) {
    return parser(line0, "did not find expected '-' indicator");
  }
  if (/Implicit map keys need to be followed by map values/.test(message)) {
    return scanner(line0 + 1, "could not find expected ':'");
  }
  // Not one libyaml is known to word the same way: the position and the parser's own text.
  return `yaml: line ${line0 + 1}: ${message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`;
}

/** Parses a file's text into the first document's Go-like value tree, or throws YamlV2Error. */
export function readYamlV2(text: string): GoNode {
  const counter = new LineCounter();
  const docs = parseAllDocuments(text, {
    version: '1.1',
    uniqueKeys: false,
    merge: true,
    lineCounter: counter,
    prettyErrors: false,
  });
  const list = Array.isArray(docs) ? docs : [docs];
  const first = list[0];
  if (first === undefined) return { kind: 'scalar', line: 0, type: 'null', text: '', value: null };
  const error = first.errors[0];
  if (error) throw new YamlV2Error(libyamlMessage(error, text, counter));
  try {
    return new Converter(first as Document, counter).convert(first.contents as Node | null);
  } catch (error) {
    // A nesting deeper than the stack: yaml.v2 stops at a depth of 10000 with this message.
    if (error instanceof RangeError) throw new YamlV2Error('yaml: exceeded max depth of 10000');
    throw error;
  }
}

/** Go's `%v` of a decoded value, as the reference prints keys and list elements in its messages. */
export function goFormat(node: GoNode): string {
  switch (node.kind) {
    case 'scalar':
      return node.type === 'null' ? '<nil>' : node.type === 'str' ? node.text : String(node.value);
    case 'seq':
      return `[${node.items.map(goFormat).join(' ')}]`;
    case 'map':
      return `map[${node.pairs
        .map(([k, v]) => [goFormat(k), goFormat(v)] as const)
        .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
        .map(([k, v]) => `${k}:${v}`)
        .join(' ')}]`;
  }
}
