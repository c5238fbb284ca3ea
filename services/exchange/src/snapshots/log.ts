import type { FastifyBaseLogger } from 'fastify';
import type { SnapshotEvent } from './book-snapshots.js';

/** Logs what book snapshots did: restores and skipped snapshots at start-up, failed writes. */
export function logSnapshotEvent(log: FastifyBaseLogger, event: SnapshotEvent): void {
  switch (event.type) {
    case 'restored':
      log.info(
        { market: event.market, snapshotSeq: event.from, seq: event.seq, ms: Math.round(event.ms) },
        event.from === null
          ? `book ${event.market} replayed from its whole command log`
          : `book ${event.market} restored from its snapshot at ${event.from} and the commands after it`,
      );
      break;
    case 'skipped':
      log.warn(
        { market: event.market, snapshotSeq: event.seq, err: event.error },
        `book snapshot ${event.market}@${event.seq} skipped; trying an older one`,
      );
      break;
    case 'written':
      log.debug(
        { market: event.market, snapshotSeq: event.seq, bytes: event.bytes },
        'book snapshot written',
      );
      break;
    case 'write_failed':
      log.warn(
        { market: event.market, snapshotSeq: event.seq, err: event.error },
        'book snapshot not written',
      );
      break;
  }
}
