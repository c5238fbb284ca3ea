import { describe, expect, it } from 'vitest';
import { revokeApiKey, setApiKeyEnabled } from '../../src/apikeys/store.js';
import { accountWithKey } from '../support/accounts.js';
import { clientSignV3, nextNonce } from '../support/signing.js';
import { usePostgresTarget } from '../support/targets.js';
import { useFeedApp } from './setup.js';
import { FeedClient } from './ws-client.js';

const target = usePostgresTarget();
const feed = useFeedApp(target, { keyCheckIntervalMs: 50, maxConnectionsPerAddress: 2, maxConnections: 10 });

function authFrame(key: { apiKey: string; secret: string }, id: number) {
  const nonce = nextNonce();
  return {
    op: 'auth',
    id,
    key: key.apiKey,
    nonce,
    signature: clientSignV3(key.secret, '/v3/ws', nonce, '{}'),
  };
}

describe('live feed: keys withdrawn after auth, connections per address (postgres)', () => {
  it('a key disabled or revoked after auth closes that connection’s private channels; public ones stay', async () => {
    for (const withdraw of [
      (key: string) => setApiKeyEnabled(target.db(), key, false),
      (key: string) => revokeApiKey(target.db(), key),
    ]) {
      const key = await accountWithKey(target.db(), ['read']);
      const client = await feed.connect();
      expect((await client.request(authFrame(key, 1))).event).toBe('authenticated');
      expect((await client.request({ op: 'subscribe', channel: 'orders', id: 2 })).event).toBe('subscribed');
      expect((await client.request({ op: 'subscribe', channel: 'balances', id: 3 })).event).toBe(
        'subscribed',
      );
      expect(
        (await client.request({ op: 'subscribe', channel: 'trades', market: 'btcusdt', id: 4 })).event,
      ).toBe('subscribed');
      const from = client.frames.length;
      expect(await withdraw(key.apiKey)).toBe(true);
      // Woken by the frame, within the test's deadline (the watch checks every 50 ms here).
      expect(await client.next((f) => f.event === 'error', from)).toMatchObject({
        code: 2009,
        name: 'key_disabled',
      });
      expect(client.frames.slice(from).filter((f) => f.event === 'error')).toHaveLength(1);
      // No longer authenticated: a private channel is refused; the connection and its public channel stay.
      expect(await client.request({ op: 'subscribe', channel: 'orders', id: 5 })).toMatchObject({
        code: 3304,
        name: 'not_authenticated',
      });
      expect(
        (await client.request({ op: 'subscribe', channel: 'trades', market: 'btcusdt', id: 6 })).event,
      ).toBe('subscribed');
      // Another key may authenticate the same connection again.
      const other = await accountWithKey(target.db(), ['read']);
      expect((await client.request(authFrame(other, 7))).event).toBe('authenticated');
      expect(client.closed).toBeUndefined();
      client.close();
      await client.whenClosed();
    }
  });

  it('at most maxConnectionsPerAddress from one address: one more is refused with 429; another address is served', async () => {
    const first = [await feed.connect(), await feed.connect()];
    await expect(feed.connect()).rejects.toThrow('upgrade refused: 429');
    // Another loopback address has places of its own.
    const elsewhere = await FeedClient.open(feed.wsUrl(), { localAddress: '127.0.0.2' });
    expect(await elsewhere.request({ op: 'ping', id: 1 })).toEqual({ event: 'pong', id: 1 });
    first[0]!.close();
    await first[0]!.whenClosed();
    // The server sees the close a moment after the client: poll with a deadline.
    const deadline = Date.now() + 10_000;
    let again: FeedClient | undefined;
    while (!again) {
      again = await feed.connect().catch((error: Error) => {
        if (Date.now() > deadline) throw error;
        return undefined;
      });
    }
    for (const client of [again, first[1]!, elsewhere]) {
      client.close();
      await client.whenClosed();
    }
  });
});
