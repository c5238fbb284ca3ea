import { Counter, type Registry } from 'prom-client';

/**
 * A counter whose value is read from a plain field at scrape time (the code paths only increment a
 * number: no prom-client call per request or per delivery).
 */
export function mirroredCounter(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}
