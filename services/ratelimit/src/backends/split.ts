import type { Algorithm } from '../rules/algorithm.js';
import type { AlgorithmOp, AlgorithmReply, CounterBackend, CounterOp } from './types.js';

/**
 * `KVSTORE_PERSECOND=true`: SECOND-unit keys go to a second store, all others to the main one.
 * Both stores are called at once, so a request still costs one round trip of wall time.
 */
export class SplitBackend implements CounterBackend {
  readonly description: string;
  readonly algorithms: ReadonlySet<Algorithm>;
  private readonly listeners: ((healthy: boolean) => void)[] = [];

  constructor(
    private readonly main: CounterBackend,
    private readonly perSecond: CounterBackend,
  ) {
    this.description = `${main.description}; per-second: ${perSecond.description}`;
    this.algorithms = new Set([...main.algorithms].filter((a) => perSecond.algorithms.has(a)));
    const notify = () => {
      for (const l of this.listeners) l(this.healthy());
    };
    main.onHealthChange(notify);
    perSecond.onHealthChange(notify);
  }

  private async route<Op extends { readonly perSecond: boolean }, R>(
    ops: readonly Op[],
    call: (b: CounterBackend, o: Op[]) => Promise<R[]>,
  ): Promise<R[]> {
    const mainOps: Op[] = [];
    const secondOps: Op[] = [];
    const where: boolean[] = ops.map((op) => op.perSecond);
    for (const op of ops) (op.perSecond ? secondOps : mainOps).push(op);
    const [mainCounts, secondCounts] = await Promise.all([
      mainOps.length > 0 ? call(this.main, mainOps) : Promise.resolve([] as R[]),
      secondOps.length > 0 ? call(this.perSecond, secondOps) : Promise.resolve([] as R[]),
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

  admit(ops: readonly AlgorithmOp[], nowMs: number): Promise<AlgorithmReply[]> {
    return this.route(ops, (b, o) => b.admit(o, nowMs));
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
