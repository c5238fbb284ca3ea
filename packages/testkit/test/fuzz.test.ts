/**
 * The fuzz harness against a toy service on a real listener: it passes a correct service, and it
 * fails (printing the seed) a service that answers 500, one that answers 4xx in another shape, and
 * one whose refused requests change its state. The generators' valid values satisfy their schemas.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { listOperations, loadOpenApi, type OpenApiDocument, type Schema } from '../src/fuzz/openapi.js';
import { fuzzService } from '../src/fuzz/run.js';
import { fuzzSettings } from '../src/fuzz/settings.js';
import { validValue } from '../src/fuzz/values.js';

const ErrorShape: Schema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } },
  },
};

const doc: OpenApiDocument = {
  openapi: '3.0.3',
  components: { schemas: { Error: ErrorShape } },
  paths: {
    '/items/{id}': {
      put: {
        parameters: [
          { in: 'path', name: 'id', required: true, schema: { type: 'string', pattern: '^[a-z]{1,8}$' } },
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['name', 'qty'],
                additionalProperties: false,
                properties: { name: { type: 'string', maxLength: 10 }, qty: { type: 'integer', minimum: 0 } },
              },
            },
          },
        },
        responses: {
          '200': {},
          '4XX': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        },
      },
    },
  },
};

type Flaw = 'none' | 'crash-on-huge-number' | 'wrong-shape' | 'writes-when-refusing';

/** A hand-written service with one chosen flaw. */
function toyService(flaw: Flaw): { server: Server; items: Map<string, unknown> } {
  const items = new Map<string, unknown>();
  const server = createServer((request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    const refuse = (message: string) =>
      send(400, flaw === 'wrong-shape' ? { message } : { error: { message } });
    if (request.url === '/health') return send(200, { ok: true });
    if (request.url === '/docs/json') return send(200, doc);
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const id = /^\/items\/([a-z]{1,8})$/.exec(request.url ?? '')?.[1];
      if (request.method !== 'PUT' || !id) return send(404, { error: { message: 'no route' } });
      let body: { name?: unknown; qty?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return refuse('malformed JSON');
      }
      if (flaw === 'writes-when-refusing') items.set(id, body);
      if (typeof body !== 'object' || body === null) return refuse('not an object');
      if (flaw === 'crash-on-huge-number' && typeof body.qty === 'number' && body.qty > 2 ** 53)
        return send(500, { error: { message: 'internal' } });
      const keys = Object.keys(body);
      if (keys.some((k) => k !== 'name' && k !== 'qty')) return refuse('unknown field');
      if (typeof body.name !== 'string' || body.name.length > 10) return refuse('bad name');
      if (typeof body.qty !== 'number' || !Number.isInteger(body.qty) || body.qty < 0)
        return refuse('bad qty');
      items.set(id, body);
      return send(200, body);
    });
  });
  return { server, items };
}

let running: Server | undefined;
afterEach(async () => {
  const server = running;
  running = undefined;
  if (server) await new Promise((resolve) => server.close(resolve));
});

async function fuzzToy(flaw: Flaw, seed = 42) {
  const toy = toyService(flaw);
  running = toy.server;
  await new Promise<void>((resolve) => toy.server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(toy.server.address() as AddressInfo).port}`;
  return fuzzService(
    {
      name: 'toy',
      baseUrl,
      operations: listOperations(await loadOpenApi(baseUrl)),
      errorShape: ErrorShape,
      digest: async () => JSON.stringify([...toy.items]),
      healthPath: '/health',
    },
    { numRuns: 300, seed },
  );
}

describe('fuzzService', () => {
  it('passes a service without flaws, and its valid requests are accepted', async () => {
    const stats = await fuzzToy('none');
    expect(stats.requests).toBe(300);
    expect(stats.byOperation['PUT /items/{id}']?.['2xx']).toBeGreaterThan(0);
  });

  it.each([
    ['crash-on-huge-number', /server error: PUT \/items\//],
    ['wrong-shape', /not the documented error shape/],
    ['writes-when-refusing', /a refused request changed the state/],
  ] as const)('fails a service that %s, naming the seed', async (flaw, message) => {
    const failure = await fuzzToy(flaw, 7).then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    expect(failure).toMatch(message);
    expect(failure).toContain('repeat with FUZZ_SEED=7');
  });
});

describe('validValue', () => {
  const ajv = new Ajv({ strict: false });
  it.each<[string, Schema]>([
    ['bounded integers', { type: 'integer', minimum: 1, maximum: 2_147_483_647 }],
    ['patterns with a lookahead', { type: 'string', pattern: '^(?!\\.{1,2}$)[A-Za-z0-9._~-]{1,64}$' }],
    ['date-times', { type: 'string', format: 'date-time' }],
    [
      'objects with required fields and unions',
      {
        type: 'object',
        required: ['a', 'b'],
        additionalProperties: false,
        properties: {
          a: {
            anyOf: [
              { type: 'integer', minimum: 1 },
              { type: 'string', pattern: '^[0-9]{1,9}$' },
            ],
          },
          b: { type: 'array', items: { enum: ['x', 'y'] }, maxItems: 3 },
          c: { type: 'string', minLength: 2, maxLength: 5, nullable: true },
        },
      },
    ],
  ])('draws values that satisfy %s', (_name, schema) => {
    const validate = ajv.compile(schema);
    fc.assert(
      fc.property(validValue(schema), (value) => validate(value)),
      { seed: fuzzSettings(200).seed, numRuns: 200 },
    );
  });
});

describe('fuzzSettings', () => {
  it('reads FUZZ_RUNS and FUZZ_SEED, and refuses what is not an integer', () => {
    expect(fuzzSettings(100, { FUZZ_RUNS: '5000', FUZZ_SEED: '12' })).toEqual({
      numRuns: 5000,
      seed: 12,
      timeoutMs: 750_000,
    });
    expect(fuzzSettings(100, {}).numRuns).toBe(100);
    expect(() => fuzzSettings(100, { FUZZ_RUNS: 'lots' })).toThrow(/FUZZ_RUNS/);
    expect(() => fuzzSettings(100, { FUZZ_SEED: '1.5' })).toThrow(/FUZZ_SEED/);
  });
});
