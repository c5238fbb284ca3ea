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
