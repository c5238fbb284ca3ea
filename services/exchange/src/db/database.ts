import type { Sql, Database as StorageDatabase } from '@platform/sql-storage/database';

// The shared part lives in @platform/sql-storage; re-exported here so the exchange's modules keep
// importing their storage types from one place beside the exchange-only ordered channel.
export { type Sql, sqlState } from '@platform/sql-storage/database';

/**
 * A connection of its own on which statements run one after another, in the order they were sent.
 * Several may be outstanding: the next is sent as soon as the one before it completes, without
 * waiting for the caller to take up the answer (the order writers' pipeline, src/orders/pipeline.ts).
 */
export interface OrderedSql extends Sql {
  /** Gives the connection back; statements still outstanding are answered first. */
  release(): Promise<void>;
}

/** The shared database plus the order writers' ordered channel. */
export interface Database extends StorageDatabase {
  /** Opens an ordered channel (PostgreSQL: a connection outside the pool; PGlite: the database). */
  ordered(): OrderedSql;
}
