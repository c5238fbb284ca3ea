import { outboxFiles, readOutboxMail } from './outbox-reader.js';

/**
 * `npm run admin -w services/exchange -- mail list|show <n>`: the mails of the outbox folder, decoded
 * (src/mail/outbox-reader.ts). Needs no database, so it works while the server runs.
 */
export const MAIL_USAGE = `  mail list                                     mails of the outbox folder, oldest first: n, date, to, subject, links (whole)
  mail show <n>|last                            one mail decoded: headers and text, links whole`;

/** A refusal for the operator (the CLI turns it into exit code 2). */
export class MailCommandError extends Error {}

export interface MailCommandContext {
  /** The outbox folder (`MAIL_OUTBOX_DIR`, default `<DATA_DIR>/outbox`). */
  readonly outboxDir: string;
  /** Set when mail goes to an SMTP server instead (`SMTP_URL`): the outbox then stays empty. */
  readonly smtp?: string | undefined;
  /** Receives a JSON-serialisable result (`list`). */
  readonly print: (value: unknown) => void;
  /** Receives text as it is (`show`). */
  readonly write: (text: string) => void;
}

export async function runMailCommand(ctx: MailCommandContext, argv: readonly string[]): Promise<void> {
  const [sub, which, ...rest] = argv;
  const files = outboxFiles(ctx.outboxDir);
  if (sub === 'list' && which === undefined) {
    const mails = [];
    for (let n = 1; n <= files.length; n++) {
      const { text: _text, ...summary } = await readOutboxMail(ctx.outboxDir, n);
      mails.push(summary);
    }
    if (mails.length === 0) throw new MailCommandError(emptyOutbox(ctx));
    ctx.print(mails);
    return;
  }
  if (sub === 'show' && which !== undefined && rest.length === 0) {
    if (files.length === 0) throw new MailCommandError(emptyOutbox(ctx));
    const n = which === 'last' ? files.length : /^[1-9][0-9]*$/.test(which) ? Number(which) : Number.NaN;
    if (!Number.isSafeInteger(n) || n > files.length) {
      throw new MailCommandError(
        `no mail "${which}": the outbox ${ctx.outboxDir} holds mails 1 to ${files.length} (or "last")`,
      );
    }
    const mail = await readOutboxMail(ctx.outboxDir, n);
    ctx.write(
      [
        `mail ${mail.n} of ${files.length} (${mail.file})`,
        `From: ${mail.from}`,
        `To: ${mail.to}`,
        `Date: ${mail.date ?? ''}`,
        `Subject: ${mail.subject}`,
        '',
        mail.text.replace(/\n+$/, ''),
        '',
      ].join('\n'),
    );
    return;
  }
  throw new MailCommandError(`usage:\n${MAIL_USAGE}`);
}

function emptyOutbox(ctx: MailCommandContext): string {
  const where = `no mail in the outbox ${ctx.outboxDir}`;
  return ctx.smtp
    ? `${where}: mail goes to the SMTP server ${ctx.smtp} (SMTP_URL is set)`
    : `${where} yet (the exchange writes a mail there for each withdrawal or transfer-code confirmation)`;
}
