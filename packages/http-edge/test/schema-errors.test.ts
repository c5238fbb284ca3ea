import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgeServerOptions } from '../src/server-options.js';
import { registerStrictBodyValidation, strictBodyValidator } from '../src/strict-body-validation.js';

// Validation failures as one readable line per field: a choice of constants names them, other
// choices join their branches with "or", enum names its values. Through Fastify's real Ajv, on a
// route (the HTTP wording) and through strictBodyValidator (the exchange's WebSocket order entry).

const body = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { anyOf: [{ const: 'limit' }, { const: 'market' }, { const: 'stop_limit' }] },
    order_id: {
      anyOf: [
        { type: 'integer', maximum: 999 },
        { type: 'string', pattern: '^[0-9]{1,3}$' },
      ],
    },
    side: { enum: ['buy', 'sell'] },
    amount: { type: 'string' },
    leg: {
      anyOf: [
        { type: 'object', required: ['price'], properties: { price: { type: 'string' } } },
        { type: 'null' },
      ],
    },
  },
} as const;

let app: FastifyInstance;

beforeAll(async () => {
  app = Fastify(edgeServerOptions({ frameworkErrors: undefined }));
  registerStrictBodyValidation(app);
  app.post('/x', { schema: { body } }, async () => ({ ok: true }));
  // Fastify's own 400 carries the formatter's message
  app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) =>
    reply.code(error.statusCode ?? 500).send({ message: error.message }),
  );
  await app.ready();
});
afterAll(() => app.close());

async function refusal(payload: unknown): Promise<string> {
  const answer = await app.inject({ method: 'POST', url: '/x', payload: payload as object });
  expect(answer.statusCode).toBe(400);
  return (answer.json() as { message: string }).message;
}

describe('validation messages', () => {
  it('names the constants of a choice in one line', async () => {
    expect(await refusal({ type: 'buy-limit' })).toBe('body/type must be one of limit, market, stop_limit');
  });

  it('joins the branches of a mixed choice with "or"', async () => {
    expect(await refusal({ type: 'limit', order_id: 'abc' })).toBe(
      'body/order_id must be integer or must match pattern "^[0-9]{1,3}$"',
    );
    expect(await refusal({ type: 'limit', order_id: 5000 })).toBe(
      'body/order_id must be <= 999 or must be string',
    );
  });

  it('names the values of an enum, and keeps other messages as Ajv words them', async () => {
    expect(await refusal({ type: 'limit', side: 'up' })).toBe('body/side must be one of buy, sell');
    expect(await refusal({ type: 'limit', amount: 5 })).toBe('body/amount must be string');
    expect(await refusal({})).toBe("body must have required property 'type'");
  });

  it('says the failure every branch shares', async () => {
    expect(await refusal({ type: ['limit', 'market'] })).toBe(
      'body/type must be one of limit, market, stop_limit',
    );
    const typed = strictBodyValidator({
      type: 'object',
      properties: {
        r: {
          anyOf: [
            { type: 'string', const: '1m' },
            { type: 'string', const: '5m' },
          ],
        },
      },
    });
    expect(typed({ r: ['1m', '5m'] })).toEqual({ ok: false, message: 'body/r must be string' });
  });

  it('says where below the field a branch failed', async () => {
    expect(await refusal({ type: 'limit', leg: { price: 1 } })).toBe(
      'body/leg price must be string or must be null',
    );
  });

  it('words strictBodyValidator failures the same way', () => {
    const check = strictBodyValidator(body);
    expect(check({ type: 'limit' })).toEqual({ ok: true });
    expect(check({ type: 'x' })).toEqual({
      ok: false,
      message: 'body/type must be one of limit, market, stop_limit',
    });
    expect(check({ type: 'limit', order_id: 'abc' })).toEqual({
      ok: false,
      message: 'body/order_id must be integer or must match pattern "^[0-9]{1,3}$"',
    });
  });
});
