/**
 * The webhook settings (README, Settings), parsed by `config.ts` with its readers so every wrong
 * value stops start-up naming the setting.
 */

export interface WebhookSettings {
  /** `WEBHOOK_ALLOW_PRIVATE_TARGETS`: deliver to loopback and private addresses too. @default false */
  allowPrivateTargets: boolean;
  /** `WEBHOOK_TIMEOUT_MS`: one attempt's whole time (connect to the last byte). @default 10000 */
  timeoutMs: number;
  /** `WEBHOOK_RETRY_SCHEDULE`: seconds before each retry after a failed attempt. @default see DEFAULT_RETRY_SCHEDULE */
  retryScheduleSeconds: readonly number[];
  /** `WEBHOOK_POLL_MS`: how often an instance looks for due deliveries of other instances' writes. @default 1000 */
  pollMs: number;
  /** `WEBHOOK_CONCURRENCY`: subscriptions one instance delivers to at once. @default 8 */
  concurrency: number;
  /** `WEBHOOK_DISPATCH`: whether this instance sends deliveries at all. @default true */
  dispatch: boolean;
  /** `WEBHOOKS_PER_USER`: subscriptions one user may hold. @default 20 */
  perUser: number;
  /** `WEBHOOK_HISTORY`: finished deliveries kept per subscription. @default 1000 */
  historyPerSubscription: number;
  /** `WEBHOOK_SENDER_THREAD`: on PostgreSQL, send from a worker thread of its own. @default true */
  senderThread: boolean;
  /** `WEBHOOK_SENDER_NICE`: that thread's nice value, 0-19 (0: the process's priority). @default 10 */
  senderNice: number;
  /** `WEBHOOK_ROTATION_GRACE_SECONDS`: how long the previous secret still signs after a rotation. @default 86400 */
  rotationGraceSeconds: number;
}

/**
 * Standard Webhooks' advice (Svix's schedule): immediately, then 5 s, 5 min, 30 min, 2 h, 5 h,
 * 10 h and 10 h: 8 attempts over 27 h 35 min (plus jitter), at least the 24 h the issue asks for.
 */
export const DEFAULT_RETRY_SCHEDULE: readonly number[] = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];

export interface SettingReaders {
  integer(name: string, fallback: number, min: number, max: number): number;
  boolean(name: string, fallback: boolean): boolean;
  text(name: string): string | undefined;
  fail(name: string, problem: string): Error;
}

/** Seconds, comma-separated: `5,300,1800`; 1-30 steps of 1 s to 7 days. */
function schedule(read: SettingReaders): readonly number[] {
  const raw = read.text('WEBHOOK_RETRY_SCHEDULE');
  if (raw === undefined) return DEFAULT_RETRY_SCHEDULE;
  const steps = raw.split(',').map((part) => part.trim());
  if (
    steps.length > 30 ||
    steps.some((step) => !/^\d+$/.test(step) || Number(step) < 1 || Number(step) > 604_800)
  ) {
    throw read.fail(
      'WEBHOOK_RETRY_SCHEDULE',
      `expected 1-30 comma-separated seconds of 1-604800 each (e.g. 5,300,1800), got "${raw}"`,
    );
  }
  return Object.freeze(steps.map(Number));
}

export function parseWebhookSettings(read: SettingReaders): WebhookSettings {
  return {
    allowPrivateTargets: read.boolean('WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
    timeoutMs: read.integer('WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    retryScheduleSeconds: schedule(read),
    pollMs: read.integer('WEBHOOK_POLL_MS', 1_000, 10, 60_000),
    concurrency: read.integer('WEBHOOK_CONCURRENCY', 8, 1, 256),
    dispatch: read.boolean('WEBHOOK_DISPATCH', true),
    perUser: read.integer('WEBHOOKS_PER_USER', 20, 1, 1_000),
    historyPerSubscription: read.integer('WEBHOOK_HISTORY', 1_000, 10, 1_000_000),
    senderThread: read.boolean('WEBHOOK_SENDER_THREAD', true),
    senderNice: read.integer('WEBHOOK_SENDER_NICE', 10, 0, 19),
    rotationGraceSeconds: read.integer('WEBHOOK_ROTATION_GRACE_SECONDS', 86_400, 1, 30 * 86_400),
  };
}
