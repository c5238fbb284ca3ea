import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('feed settings', () => {
  it('defaults as documented in the README, and each FEED_ setting read', () => {
    expect(loadConfig({}, '/srv/app').feed).toEqual({
      enabled: true,
      maxConnections: 10_000,
      maxConnectionsPerAddress: 100,
      keyCheckIntervalMs: 5_000,
      maxSubscriptions: 50,
      maxFrameBytes: 4_096,
      maxBufferedBytes: 1_048_576,
      messagesPerSecond: 10,
      messageBurst: 50,
      tickerIntervalMs: 1_000,
      resumeFrames: 10_000,
      resumeMaxBytes: 67_108_864,
      maxPendingOperations: 256,
      fanOutShare: 0.1,
      fanOutMaxDelayMs: 100,
    });
    const set = loadConfig(
      {
        FEED_ENABLED: 'false',
        FEED_MAX_CONNECTIONS: '5',
        FEED_MAX_CONNECTIONS_PER_ADDRESS: '3',
        FEED_KEY_CHECK_INTERVAL_MS: '100',
        FEED_MAX_SUBSCRIPTIONS: '6',
        FEED_MAX_FRAME_BYTES: '1024',
        FEED_MAX_BUFFERED_BYTES: '65536',
        FEED_MESSAGES_PER_SECOND: '7',
        FEED_MESSAGE_BURST: '8',
        FEED_TICKER_INTERVAL_MS: '250',
        FEED_RESUME_FRAMES: '20000',
        FEED_RESUME_MAX_BYTES: '1048576',
        FEED_MAX_PENDING_OPERATIONS: '16',
        FEED_FANOUT_SHARE: '1',
        FEED_FANOUT_MAX_DELAY_MS: '80',
      },
      '/srv/app',
    ).feed;
    expect(set).toEqual({
      enabled: false,
      maxConnections: 5,
      maxConnectionsPerAddress: 3,
      keyCheckIntervalMs: 100,
      maxSubscriptions: 6,
      maxFrameBytes: 1_024,
      maxBufferedBytes: 65_536,
      messagesPerSecond: 7,
      messageBurst: 8,
      tickerIntervalMs: 250,
      resumeFrames: 20_000,
      resumeMaxBytes: 1_048_576,
      maxPendingOperations: 16,
      fanOutShare: 1,
      fanOutMaxDelayMs: 80,
    });
  });

  it('a wrong value stops the start naming the setting', () => {
    expect(() => loadConfig({ FEED_MAX_FRAME_BYTES: '10' })).toThrow(
      /FEED_MAX_FRAME_BYTES: expected 256\.\./,
    );
    expect(() => loadConfig({ FEED_ENABLED: 'maybe' })).toThrow(/FEED_ENABLED/);
    expect(() => loadConfig({ FEED_MAX_CONNECTIONS: '-1' })).toThrow(/FEED_MAX_CONNECTIONS/);
    for (const wrong of ['0', '1.5', '0.001', 'half', '-0.2'])
      expect(() => loadConfig({ FEED_FANOUT_SHARE: wrong })).toThrow(/FEED_FANOUT_SHARE/);
  });
});
