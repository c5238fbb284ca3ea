import type { MailConfig } from '../config.js';
import type { Mailer } from './mailer.js';
import { createOutboxMailer } from './outbox.js';
import { createSmtpMailer } from './smtp.js';

/** The mailer the settings describe: SMTP when `SMTP_URL` is set, else the outbox folder. */
export function openMailer(config: MailConfig): Mailer {
  if (!config.smtpUrl) return createOutboxMailer(config.outboxDir, config.from);
  return createSmtpMailer({
    url: config.smtpUrl,
    user: config.smtpUser,
    password: config.smtpPassword,
    requireTls: config.smtpRequireTls,
    tlsRejectUnauthorized: config.smtpTlsRejectUnauthorized,
    from: config.from,
  });
}
