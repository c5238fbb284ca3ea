import type { Database, OrderedSql } from '../db/database.js';
import { type BatchEffects, type BatchWritten, chainHead, writeBatch } from './store.js';

/**
 * Batches in flight by default: one. Measured on 2 shared cores (bench:e2e, two runs), 2 in flight
 * lowered throughput (0.80x-0.92x of the anchor against 1.00x-1.01x at 32 clients, 1.08x-1.12x
 * against 1.23x at 128): the
 * closed-loop clients split over two batches, each half as large, and a batch's fixed cost (about
 * 270 µs of PostgreSQL and 250 µs of this process, mostly the round trip) is paid twice as often,
 * while the overlap gains little when the database and this process share the same two cores. Depth
 * 2 or more pays where the database has cores of its own and the round trip is long.
 */
export const PIPELINE_DEPTH = 1;

/**
 * Sends the batch statements of every market's writer on one ordered connection, up to `depth` at a
 * time, so that PostgreSQL starts the next batch as soon as one commits instead of waiting while
 * this process answers the callers and computes the next (the writer and the database take turns
 * otherwise, each idle half the time).
 *
 * A batch is computed on the state the batches sent before it will leave, so it must not commit
 * unless they all did: each statement moves the batch chain row (007_batch_chain.sql) from the value
 * its predecessor set to its own and refuses itself otherwise. Statements run in the order sent, so
 * once one fails every later one in flight fails too, and nothing is sent until they have all
 * settled and the chain's value has been read again. Writers compute one batch at a time
 * (`exclusive`), in the order they send, which is the chain's order.
 */
export class BatchPipeline {
  private readonly sql: OrderedSql;
  /** The chain value the last batch sent will leave; undefined until read (at start, after a failure). */
  private head: number | undefined;
  private inFlight = 0;
  /** A batch failed and others are still in flight (they will fail too). */
  private failing = false;
  private turn: Promise<unknown> = Promise.resolve();
  private waiters: { ready: () => boolean; resolve: () => void }[] = [];

  constructor(
    private readonly db: Database,
    readonly depth = PIPELINE_DEPTH,
    /** A cluster node's id: its own chain row (node_chains) instead of the single one. */
    private readonly node?: string,
  ) {
    this.sql = db.ordered();
  }

  /** Runs `fn` alone among the writers once there is room for one more batch in flight. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.turn.then(async () => {
      await this.until(() => this.inFlight < this.depth && !this.failing);
      return fn();
    });
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** Resolves once no batch is in flight (values read then are not shifted by a batch yet to land). */
  quiet(): Promise<void> {
    return this.until(() => this.inFlight === 0);
  }

  /** Reads the chain's value when it is not known; call inside a turn before computing a batch. */
  async prepare(): Promise<void> {
    if (this.head !== undefined) return;
    await this.quiet();
    this.head = await chainHead(this.db, this.node);
  }

  /**
   * Sends one batch's statement, chained to the batch sent before it. Call inside a turn, after
   * `prepare`, synchronously after computing the batch, so that the order sent is the order computed.
   */
  send(effects: Omit<BatchEffects, 'chain'>): Promise<BatchWritten> {
    if (this.head === undefined) throw new Error('BatchPipeline.send before prepare');
    const prev = this.head;
    this.head = prev + 1;
    this.inFlight += 1;
    const written = writeBatch(this.sql, { ...effects, chain: { prev, next: prev + 1 } });
    written.then(
      () => this.settle(false),
      () => this.settle(true),
    );
    return written;
  }

  /** Waits for the batches in flight and gives the connection back. */
  async close(): Promise<void> {
    await this.quiet();
    await this.sql.release();
  }

  private settle(failed: boolean): void {
    this.inFlight -= 1;
    if (failed) this.failing = true;
    if (this.inFlight === 0 && this.failing) {
      // The chain stopped at the last batch that committed, which may not be known (lost answer).
      this.failing = false;
      this.head = undefined;
    }
    const waiting = this.waiters;
    this.waiters = [];
    for (const waiter of waiting) {
      if (waiter.ready()) waiter.resolve();
      else this.waiters.push(waiter);
    }
  }

  private until(ready: () => boolean): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ ready, resolve }));
  }
}
