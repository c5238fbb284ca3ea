import { Counter, Histogram, type Registry } from 'prom-client';
import type { RouteDeps } from '../http/deps.js';
import type { App } from '../http/typed.js';
import type { CancelAfterConfig } from './config.js';
import { cancelAllRoutes } from './routes.js';
import { SwitchScheduler } from './service.js';

/** Name of a single process in `cancel_after.claimed_by` (a cluster node uses its NODE_ID). */
const SINGLE_NODE = 'single';

/**
 * Wires cancel-all and the dead-man's switch into the app (one call from app.ts): the two routes,
 * the scheduler that fires due switches (on every node of a cluster: the database's claim lets one
 * fire each) and its metrics.
 */
export function registerCancelAll(
  app: App,
  deps: RouteDeps,
  options: { readonly config: CancelAfterConfig; readonly node?: string; readonly metrics: Registry },
): SwitchScheduler {
  cancelAllRoutes(app, deps);
  const fired = new Counter({
    name: 'exchange_cancel_after_fired_total',
    help: "Dead-man's switches (POST /v3/order/cancel-all-after) this process fired.",
    registers: [options.metrics],
  });
  const cancelled = new Counter({
    name: 'exchange_cancel_after_orders_cancelled_total',
    help: "Orders cancelled by dead-man's switches this process fired.",
    registers: [options.metrics],
  });
  const retried = new Counter({
    name: 'exchange_cancel_after_retries_total',
    help: "Firings of dead-man's switches given up to be tried again (a market between owners, the database out of reach).",
    registers: [options.metrics],
  });
  const late = new Histogram({
    name: 'exchange_cancel_after_fire_late_seconds',
    help: "Time from a dead-man's switch's trigger to its recorded firing (every order cancelled).",
    buckets: [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 2, 5, 10],
    registers: [options.metrics],
  });
  const scheduler = new SwitchScheduler(
    {
      db: deps.db,
      orders: deps.orders,
      now: deps.now,
      node: options.node ?? SINGLE_NODE,
      claimMs: options.config.claimMs,
      fired: (firing) => {
        fired.inc();
        cancelled.inc(firing.cancelled);
        late.observe(firing.lateMs / 1000);
        app.log.info(
          { apiKeyId: firing.claimed.keyId, cancelled: firing.cancelled, lateMs: firing.lateMs },
          "dead-man's switch fired",
        );
      },
      failed: (claimed, error) => {
        retried.inc();
        app.log.warn(
          { err: error, apiKeyId: claimed.keyId },
          "dead-man's switch firing failed; trying again",
        );
      },
    },
    options.config.checkMs,
    (error) => app.log.error({ err: error }, "checking dead-man's switches failed"),
  );
  scheduler.start();
  // Before the order service closes: a firing in progress finishes its cancels.
  app.addHook('preClose', async () => {
    await scheduler.close();
  });
  return scheduler;
}
