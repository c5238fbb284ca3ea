/** One outgoing e-mail. `text` is always sent; `html` is an optional alternative part. */
export interface OutgoingMail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html?: string;
}

/**
 * Where the exchange's mail goes: an SMTP server (`smtp.ts`) or, with no SMTP settings, files in an
 * outbox folder (`outbox.ts`), so the embedded demo works without a mail server.
 */
export interface Mailer {
  /** Resolves once the mail is accepted (by the SMTP server, or written to the outbox). */
  send(mail: OutgoingMail): Promise<void>;
  close(): Promise<void>;
  /** Where mail goes, for the start-up log line (never carries credentials). */
  readonly description: string;
}
