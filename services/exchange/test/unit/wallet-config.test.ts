import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('wallet settings', () => {
  it('defaults to the sandbox for every coin, with documented confirmations and intervals', () => {
    const { wallet } = loadConfig({});
    expect(wallet).toEqual({
      sandbox: true,
      sandboxWithdrawalDelayMs: 3_000,
      nodes: {},
      confirmations: { btc: 2, ltc: 3, eth: 12, usdt: 12, xrp: 1 },
      pollMs: 2_000,
      sendLeaseMs: 30_000,
      confirmationTtlMs: 3_600_000,
      failpoint: undefined,
    });
    expect(Object.isFrozen(wallet)).toBe(true);
  });

  it('reads a node per coin and the other settings', () => {
    const { wallet } = loadConfig(
      {
        CUSTODY_NODE_LTC_URL: 'http://u:p@127.0.0.1:19332',
        CUSTODY_NODE_LTC_WALLET: 'hot',
        CUSTODY_NODE_LTC_COOKIE_FILE: 'node/.cookie',
        CUSTODY_SANDBOX: 'false',
        DEPOSIT_CONFIRMATIONS: 'ltc=6, btc=3',
        WALLET_POLL_MS: '500',
      },
      '/srv',
    );
    expect(wallet.nodes).toEqual({
      ltc: { url: 'http://u:p@127.0.0.1:19332', wallet: 'hot', cookieFile: '/srv/node/.cookie' },
    });
    expect(wallet).toMatchObject({ sandbox: false, confirmations: { ltc: 6, btc: 3 }, pollMs: 500 });
  });

  it('fails naming the setting', () => {
    expect(() => loadConfig({ CUSTODY_NODE_LTC_URL: 'ftp://x' })).toThrow(/CUSTODY_NODE_LTC_URL/);
    expect(() => loadConfig({ DEPOSIT_CONFIRMATIONS: 'btc=0' })).toThrow(/DEPOSIT_CONFIRMATIONS/);
    expect(() => loadConfig({ DEPOSIT_CONFIRMATIONS: 'btc:2' })).toThrow(/DEPOSIT_CONFIRMATIONS/);
    expect(() => loadConfig({ WALLET_POLL_MS: 'soon' })).toThrow(/WALLET_POLL_MS/);
    expect(() => loadConfig({ CUSTODY_SANDBOX: 'maybe' })).toThrow(/CUSTODY_SANDBOX/);
  });
});
