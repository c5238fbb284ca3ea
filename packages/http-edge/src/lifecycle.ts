/** What the lifecycle logs through (a pino logger or Fastify's `app.log`). */
export interface LifecycleLog {
  info(object: object, message: string): void;
  error(object: object, message: string): void;
}

export interface GracefulClose {
  /** Closes the listeners, stores and exporters, in the service's order. */
  readonly close: () => Promise<void>;
  /** The log line when a signal arrives. @default "shutting down" */
  readonly closingMessage?: string;
  /** The log line when closing throws (the exit code is then 1). @default "shutdown failed" */
  readonly failedMessage?: string;
}

/**
 * The server lifecycle's end, the same in every service: the first SIGTERM or SIGINT logs
 * `{ signal }`, runs `close` (in-flight requests finish: Fastify's `close` waits for them) and exits
 * 0, or logs the error and exits 1; later signals are ignored while it closes.
 */
export function closeOnSignals(log: LifecycleLog, spec: GracefulClose): void {
  let closing = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (closing) return;
    closing = true;
    log.info({ signal }, spec.closingMessage ?? 'shutting down');
    try {
      await spec.close();
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, spec.failedMessage ?? 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/** What a service closes at its end: a listener, an app or a pool (`close`), an exporter (`shutdown`). */
export type Closable = { close(): Promise<unknown> } | { shutdown(): Promise<unknown> };

/**
 * A `close` for `GracefulClose` that closes `steps` in order, the members of one step at once (a
 * list): `closeInOrder([app, metricsListener], tracing)` stops both listeners (in-flight requests
 * finish) and then exports the last spans. A step that throws stops the rest (the lifecycle logs it
 * and exits 1).
 */
export function closeInOrder(...steps: readonly (Closable | readonly Closable[])[]): () => Promise<void> {
  const closeOne = (item: Closable): Promise<unknown> => ('close' in item ? item.close() : item.shutdown());
  return async () => {
    for (const step of steps) {
      if (Array.isArray(step)) await Promise.all(step.map(closeOne));
      else await closeOne(step as Closable);
    }
  };
}

/** What a started service hands to its lifecycle: where to log, and how to close it. */
export interface StartedService extends GracefulClose {
  readonly log: LifecycleLog;
}

/**
 * A service's whole `main`: reads its configuration once (a `configError` is printed as
 * `<name>: invalid configuration: <message>` and exits 1, naming the setting), starts it, and closes
 * it on SIGTERM or SIGINT (`closeOnSignals`); a start that throws prints `<name>: could not start:
 * <message>` and exits 1.
 */
export function runService<Config>(spec: {
  readonly name: string;
  readonly loadConfig: () => Config;
  readonly configError: abstract new (...args: never[]) => Error;
  readonly start: (config: Config) => Promise<StartedService>;
}): void {
  const main = async (): Promise<void> => {
    let config: Config;
    try {
      config = spec.loadConfig();
    } catch (error) {
      if (error instanceof spec.configError) {
        process.stderr.write(`${spec.name}: invalid configuration: ${error.message}\n`);
        process.exit(1);
      }
      throw error;
    }
    const started = await spec.start(config);
    closeOnSignals(started.log, started);
  };
  main().catch((error: unknown) => {
    process.stderr.write(
      `${spec.name}: could not start: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  });
}

/**
 * One start step of a service whose main is top-level code rather than `runService` (exchange,
 * paygate): a failure the operator fixes by a setting, such as a port in use
 * (`METRICS_PORT 9501 is in use: set METRICS_PORT or METRICS_PORT=0`), is printed as
 * `<name>: could not start: <message>`, one line, and the process exits 1, as `runService` does,
 * instead of an uncaught rejection's stack trace that buries the message.
 */
export async function startStep<T>(name: string, step: Promise<T>): Promise<T> {
  try {
    return await step;
  } catch (error) {
    process.stderr.write(
      `${name}: could not start: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  }
}
