/**
 * The part of an OpenAPI 3.0 document (as `@fastify/swagger` publishes it) that the fuzzer reads:
 * operations with their parameters, request bodies and documented error responses, `$ref`s resolved.
 */

/** A JSON Schema as found in the document; only the keywords the generators understand are typed. */
export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number | boolean;
  exclusiveMaximum?: number | boolean;
  maxProperties?: number;
  nullable?: boolean;
  $ref?: string;
}

export interface Parameter {
  readonly in: 'path' | 'query' | 'header' | 'cookie';
  readonly name: string;
  readonly required: boolean;
  readonly schema: Schema;
}

export interface Operation {
  readonly method: string;
  /** The path template, e.g. `/events/{eventId}`. */
  readonly path: string;
  /** `METHOD /path`, for messages. */
  readonly id: string;
  readonly parameters: readonly Parameter[];
  /** The first media type of the request body and its schema, when the operation takes one. */
  readonly body?: { readonly mediaType: string; readonly schema: Schema; readonly required: boolean };
  /** Names of the security schemes of the operation; `[]` when none or when anonymous access is allowed. */
  readonly security: readonly string[];
  /** Status keys of the documented responses (`200`, `4XX`, ...) and their JSON schema when given. */
  readonly responses: Readonly<Record<string, Schema | undefined>>;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, RawOperation>>;
  components?: { schemas?: Record<string, Schema> };
}

interface RawOperation {
  parameters?: { in: Parameter['in']; name: string; required?: boolean; schema?: Schema }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  security?: Record<string, string[]>[];
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);

/** Fetches the document a running service publishes (`/docs/json` for `@fastify/swagger-ui`). */
export async function loadOpenApi(baseUrl: string, path = '/docs/json'): Promise<OpenApiDocument> {
  const response = await fetch(`${baseUrl}${path}`);
  if (!response.ok) throw new Error(`GET ${path}: HTTP ${response.status}`);
  const doc = (await response.json()) as OpenApiDocument;
  if (typeof doc.openapi !== 'string' || !doc.paths) throw new Error(`${path} is not an OpenAPI 3 document`);
  return doc;
}

/** Replaces every local `$ref` by the schema it names (the documents have no recursive schemas). */
export function resolveRefs(schema: Schema, doc: OpenApiDocument, depth = 0): Schema {
  if (depth > 32) throw new Error('schema nested too deep (recursive $ref?)');
  if (schema.$ref !== undefined) {
    const name = schema.$ref.replace(/^#\/components\/schemas\//, '');
    const target = doc.components?.schemas?.[name];
    if (!target) throw new Error(`unresolved $ref ${schema.$ref}`);
    return resolveRefs(target, doc, depth + 1);
  }
  const out: Schema = { ...schema };
  if (schema.properties)
    out.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([k, v]) => [k, resolveRefs(v, doc, depth + 1)]),
    );
  if (schema.items) out.items = resolveRefs(schema.items, doc, depth + 1);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = schema[key];
    if (list) out[key] = list.map((s) => resolveRefs(s, doc, depth + 1));
  }
  if (typeof schema.additionalProperties === 'object')
    out.additionalProperties = resolveRefs(schema.additionalProperties, doc, depth + 1);
  return out;
}

/** Every operation of the document, in document order. */
export function listOperations(doc: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      const placeholders = new Set([...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]));
      const parameters: Parameter[] = (raw.parameters ?? [])
        // @fastify/swagger lists a shared params schema on routes without the placeholder; skip those.
        .filter((p) => p.in !== 'path' || placeholders.has(p.name))
        .map((p) => ({
          in: p.in,
          name: p.name,
          required: p.in === 'path' || p.required === true,
          schema: resolveRefs(p.schema ?? {}, doc),
        }));
      const content = Object.entries(raw.requestBody?.content ?? {})[0];
      const security = raw.security ?? [];
      const anonymous = security.length === 0 || security.some((s) => Object.keys(s).length === 0);
      operations.push({
        method: method.toUpperCase(),
        path,
        id: `${method.toUpperCase()} ${path}`,
        parameters,
        ...(content
          ? {
              body: {
                mediaType: content[0],
                schema: resolveRefs(content[1].schema ?? {}, doc),
                required: raw.requestBody?.required === true,
              },
            }
          : {}),
        security: anonymous ? [] : [...new Set(security.flatMap((s) => Object.keys(s)))],
        responses: Object.fromEntries(
          Object.entries(raw.responses ?? {}).map(([status, r]) => {
            const json = r.content?.['application/json']?.schema;
            return [status, json ? resolveRefs(json, doc) : undefined];
          }),
        ),
      });
    }
  }
  return operations;
}

/** The schema documented for `status` (exact, then `4XX`-style ranges), if any. */
export function documentedResponse(operation: Operation, status: number): Schema | undefined {
  return operation.responses[String(status)] ?? operation.responses[`${String(status)[0]}XX`];
}
