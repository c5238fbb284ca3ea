import type { CounterBackend, CounterOp } from './types.js';

/**
 * `KVSTORE_PERSECOND=true`: SECOND-unit keys go to a second store, all others to the main one.
 * Both stores are called at once, so a request still costs one round trip of wall time.
 */
export class SplitBackend implements CounterBackend {
  readonly description: string;
  private readonly listeners: ((healthy: boolean) => void)[] = [];

  constructor(
    private readonly main: CounterBackend,
    private readonly perSecond: CounterBackend,
  ) {
    this.description = `${main.description}; per-second: ${perSecond.description}`;
    const notify = () => {
      for (const l of this.listeners) l(this.healthy());
    };
    main.onHealthChange(notify);
    perSecond.onHealthChange(notify);
  }

  private async route(
    ops: readonly CounterOp[],
    call: (b: CounterBackend, o: CounterOp[]) => Promise<number[]>,
  ): Promise<number[]> {
    const mainOps: CounterOp[] = [];
    const secondOps: CounterOp[] = [];
    const where: boolean[] = ops.map((op) => op.perSecond);
    for (const op of ops) (op.perSecond ? secondOps : mainOps).push(op);
    const [mainCounts, secondCounts] = await Promise.all([
      mainOps.length > 0 ? call(this.main, mainOps) : Promise.resolve([]),
      secondOps.length > 0 ? call(this.perSecond, secondOps) : Promise.resolve([]),
    ]);
    let m = 0;
    let s = 0;
    return where.map((perSecond) => (perSecond ? secondCounts[s++]! : mainCounts[m++]!));
  }

  increment(ops: readonly CounterOp[]): Promise<number[]> {
    return this.route(ops, (b, o) => b.increment(o));
  }

  read(ops: readonly CounterOp[]): Promise<number[]> {
    return this.route(ops, (b, o) => b.read(o));
  }

  healthy(): boolean {
    return this.main.healthy() && this.perSecond.healthy();
  }

  onHealthChange(listener: (healthy: boolean) => void): void {
    this.listeners.push(listener);
  }

  async ready(): Promise<boolean> {
    const [a, b] = await Promise.all([this.main.ready(), this.perSecond.ready()]);
    return a && b;
  }

  async close(): Promise<void> {
    await Promise.all([this.main.close(), this.perSecond.close()]);
  }
}
