import type { Registry } from 'prom-client';
import type { WebhookCounters } from '../webhooks/dispatcher.js';
import { mirroredCounter } from './mirrored-counter.js';

/**
 * The webhook sender's numbers, read from its counters at scrape time: messages delivered, attempts
 * without a 2xx answer (each retry counts), subscriptions disabled (410, retries used up, or fallen
 * behind the log's retention).
 */
export function registerWebhookMetrics(registry: Registry, counters: WebhookCounters): void {
  const mirrored = (name: string, help: string, read: () => number) =>
    mirroredCounter(registry, name, help, read);
  mirrored(
    'events_webhook_deliveries_total',
    'Webhook messages delivered (a 2xx answer).',
    () => counters.delivered,
  );
  mirrored(
    'events_webhook_failed_attempts_total',
    'Webhook attempts without a 2xx answer (refused target, no connection, timeout, non-2xx), each retry counted.',
    () => counters.failedAttempts,
  );
  mirrored(
    'events_webhook_disabled_total',
    'Webhook subscriptions disabled by this instance (410 Gone, retry schedule used up, fallen behind the retention).',
    () => counters.disabled,
  );
}
