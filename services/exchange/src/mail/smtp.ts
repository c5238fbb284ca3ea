import nodemailer from 'nodemailer';
import type { Mailer, OutgoingMail } from './mailer.js';

/** SMTP settings (see config.ts: SMTP_URL, SMTP_USER, SMTP_PASSWORD, SMTP_REQUIRE_TLS, ...). */
export interface SmtpSettings {
  /** `smtp://host:port` (STARTTLS when offered) or `smtps://host:port` (TLS from the first byte). */
  readonly url: string;
  readonly user: string | undefined;
  readonly password: string | undefined;
  /** Refuse to send unless the server upgrades to TLS with STARTTLS. */
  readonly requireTls: boolean;
  /** Verify the server's certificate. */
  readonly tlsRejectUnauthorized: boolean;
  readonly from: string;
}

/** Sends through an SMTP server with a pooled nodemailer transport. */
export function createSmtpMailer(settings: SmtpSettings): Mailer {
  const url = new URL(settings.url);
  const secure = url.protocol === 'smtps:';
  const transport = nodemailer.createTransport({
    host: url.hostname,
    port: Number(url.port || (secure ? 465 : 587)),
    secure,
    requireTLS: settings.requireTls,
    pool: true,
    tls: { rejectUnauthorized: settings.tlsRejectUnauthorized },
    ...(settings.user ? { auth: { user: settings.user, pass: settings.password ?? '' } } : {}),
  });
  return {
    description: `SMTP server ${url.host}${secure ? ' (TLS)' : ''}`,
    async send(mail: OutgoingMail) {
      await transport.sendMail({ from: settings.from, ...mail });
    },
    async close() {
      transport.close();
    },
  };
}
