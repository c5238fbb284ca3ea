import path from 'node:path';
import { boolean, ConfigError, integer } from '../settings/parse.js';

/** Outgoing mail (withdrawal and transfer-code confirmations) and the links in it. */
export interface MailConfig {
  /** SMTP server; unset = mails are written to `outboxDir`. (`SMTP_URL`, `smtp://` or `smtps://`) */
  readonly smtpUrl: string | undefined;
  /** @default unset (`SMTP_USER`) */
  readonly smtpUser: string | undefined;
  /** @default unset (`SMTP_PASSWORD`) */
  readonly smtpPassword: string | undefined;
  /** Refuse to send unless STARTTLS succeeds. @default false (`SMTP_REQUIRE_TLS`) */
  readonly smtpRequireTls: boolean;
  /** Verify the SMTP server's certificate. @default true (`SMTP_TLS_REJECT_UNAUTHORIZED`) */
  readonly smtpTlsRejectUnauthorized: boolean;
  /** @default 'Exchange <no-reply@exchange.invalid>' (`MAIL_FROM`) */
  readonly from: string;
  /** @default '<DATA_DIR>/outbox' (`MAIL_OUTBOX_DIR`) */
  readonly outboxDir: string;
  /** Base URL of the links in mails. @default 'http://<HOST>:<PORT>' (`PUBLIC_URL`) */
  readonly publicUrl: string;
  /**
   * True when `PUBLIC_URL` is unset: the links then follow the address the server listens on, so
   * with `PORT=0` they carry the port the system gave, not `:0`. @default true
   */
  readonly publicUrlFromListener: boolean;
  /** How long a confirm/cancel link works. @default 3600000 (`LINK_TTL_SECONDS`=3600, 60..604800) */
  readonly linkTtlMs: number;
}

/** The mail settings; `host` and `port` are the server's, for the default `PUBLIC_URL`. */
export function mailConfig(
  env: NodeJS.ProcessEnv,
  cwd: string,
  dataDir: string,
  host: string,
  port: number,
): MailConfig {
  const smtpUrl = env.SMTP_URL || undefined;
  if (smtpUrl && !/^smtps?:\/\/[^/]+/.test(smtpUrl)) {
    throw new ConfigError('SMTP_URL', 'expected smtp://host[:port] or smtps://host[:port]');
  }
  if (smtpUrl && new URL(smtpUrl).username) {
    throw new ConfigError('SMTP_URL', 'put credentials in SMTP_USER and SMTP_PASSWORD, not in the URL');
  }
  const publicUrl = env.PUBLIC_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (!/^https?:\/\/[^/]+/.test(publicUrl)) {
    throw new ConfigError('PUBLIC_URL', 'expected an http:// or https:// URL');
  }
  return Object.freeze({
    smtpUrl,
    smtpUser: env.SMTP_USER || undefined,
    smtpPassword: env.SMTP_PASSWORD || undefined,
    smtpRequireTls: boolean(env, 'SMTP_REQUIRE_TLS', false),
    smtpTlsRejectUnauthorized: boolean(env, 'SMTP_TLS_REJECT_UNAUTHORIZED', true),
    from: env.MAIL_FROM || 'Exchange <no-reply@exchange.invalid>',
    outboxDir: env.MAIL_OUTBOX_DIR ? path.resolve(cwd, env.MAIL_OUTBOX_DIR) : path.join(dataDir, 'outbox'),
    publicUrl: publicUrl.replace(/\/+$/, ''),
    publicUrlFromListener: !env.PUBLIC_URL,
    linkTtlMs: integer(env, 'LINK_TTL_SECONDS', 3600, 60, 604_800) * 1000,
  });
}
