import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { addFundSource, listFundSources, openFundSource } from '../../src/fiat/fund-sources.js';
import type { App } from '../../src/http/typed.js';
import { accountWithKey } from '../support/accounts.js';
import { client } from '../support/client.js';
import { reference, secretBox, usePostgresTarget } from '../support/targets.js';

const target = usePostgresTarget();

describe('saved fiat destinations (fund sources)', () => {
  let app: App;
  beforeAll(async () => {
    app = await buildApp({ db: target.db(), reference, secretBox });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('stores field values sealed under the master key and shows them masked', async () => {
    const owner = await accountWithKey(target.db(), ['read', 'withdraw']);
    const saved = await addFundSource(target.db(), secretBox, {
      accountId: owner.account.id,
      currency: 'uah',
      service: 'payment_card_uah',
      fields: { card_number: '4242424242424242' },
      label: 'my card',
    });
    expect(saved.masked).toEqual({ card_number: '424242******4242' });
    const { rows } = await target
      .db()
      .query<{ fields_box: string; masked: unknown }>(
        'SELECT fields_box, masked FROM fund_sources WHERE id = $1',
        [saved.id],
      );
    expect(rows[0]!.fields_box).toMatch(/^v1:/);
    expect(JSON.stringify(rows[0])).not.toContain('4242424242424242');
    const opened = await openFundSource(target.db(), secretBox, owner.account.id, saved.id);
    expect(opened?.fields).toEqual({ card_number: '4242424242424242' });

    const listed = await client(() => app, owner.apiKey, owner.secret).v3('/v3/auth/fund_sources/list', {
      currency: 'uah',
    });
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual([
      {
        id: saved.id,
        currency: 'uah',
        gateway: 'payment_card_uah',
        fields: { card_number: '424242******4242' },
        label: 'my card',
        created_at: expect.any(String),
      },
    ]);
    expect(
      (
        await client(() => app, owner.apiKey, owner.secret).v3('/v3/auth/fund_sources/list', {
          currency: 'usd',
        })
      ).json(),
    ).toEqual([]);
  });

  it("never shows, opens or deletes another account's destination", async () => {
    const owner = await accountWithKey(target.db(), ['read', 'withdraw']);
    const other = await accountWithKey(target.db(), ['read', 'withdraw']);
    const saved = await addFundSource(target.db(), secretBox, {
      accountId: owner.account.id,
      currency: 'uah',
      service: 'payment_card_uah',
      fields: { card_number: '4111111111111111' },
      label: '',
    });
    expect(await openFundSource(target.db(), secretBox, other.account.id, saved.id)).toBeUndefined();
    // A box copied onto another account's row does not open: it is bound to its owner.
    const copy = await addFundSource(target.db(), secretBox, {
      accountId: other.account.id,
      currency: 'uah',
      service: 'payment_card_uah',
      fields: { card_number: '4000000000000002' },
      label: '',
    });
    await target
      .db()
      .query(
        'UPDATE fund_sources SET fields_box = (SELECT fields_box FROM fund_sources WHERE id = $1) WHERE id = $2',
        [saved.id, copy.id],
      );
    await expect(openFundSource(target.db(), secretBox, other.account.id, copy.id)).rejects.toThrow();

    const stranger = client(() => app, other.apiKey, other.secret);
    const refused = await stranger.v3('/v3/auth/fund_sources/delete', { id: saved.id });
    expect(refused.statusCode).toBe(404);
    expect(refused.json().error).toMatchObject({ code: 3206, name: 'fund_source_not_found' });
    const mine = client(() => app, owner.apiKey, owner.secret);
    expect((await mine.v3('/v3/auth/fund_sources/delete', { id: String(saved.id) })).json()).toEqual({
      success: true,
    });
    expect(await listFundSources(target.db(), owner.account.id)).toEqual([]);
    expect((await mine.v3('/v3/auth/fund_sources/delete', { id: saved.id })).statusCode).toBe(404);
  });

  it('needs the withdraw scope to add or delete, and a fiat currency to add', async () => {
    const reader = await accountWithKey(target.db(), ['read']);
    const response = await client(() => app, reader.apiKey, reader.secret).v3('/v3/auth/fund_sources/add', {
      currency: 'uah',
      gateway: 'payment_card_uah',
      fields: { card_number: '4242424242424242' },
    });
    expect(response.json().error.name).toBe('scope_missing');
    const writer = await accountWithKey(target.db(), ['withdraw']);
    const crypto = await client(() => app, writer.apiKey, writer.secret).v3('/v3/auth/fund_sources/add', {
      currency: 'btc',
      gateway: 'payment_card_uah',
      fields: {},
    });
    expect(crypto.statusCode).toBe(400);
    expect(crypto.json().error).toMatchObject({ code: 3200, name: 'fiat_only' });
  });
});

describe('OpenAPI of the fiat routes', () => {
  it('documents the deposit, fund source and gateway callback routes', async () => {
    const app = await buildApp({ db: target.db(), reference, secretBox });
    try {
      const spec = (await app.inject({ method: 'GET', url: '/docs/json' })).json();
      for (const path of [
        '/v3/auth/deposit',
        '/v3/auth/fund_sources/list',
        '/v3/auth/fund_sources/add',
        '/v3/auth/fund_sources/delete',
        '/v3/paygate/callback',
      ]) {
        expect(spec.paths[path]?.post?.summary, path).toEqual(expect.any(String));
      }
      expect(spec.paths['/v3/paygate/return']?.get).toBeDefined();
      expect(spec.paths['/v3/paygate/callback'].post.description).toContain('x-paygate-signature');
    } finally {
      await app.close();
    }
  });
});
