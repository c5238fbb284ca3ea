import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Mailer, OutgoingMail } from './mailer.js';

/**
 * Writes each mail as an RFC 5322 `.eml` file into a folder (the embedded default: no SMTP server
 * needed for the demo), and its decoded text next to it as `.txt`: the `.eml` body is
 * quoted-printable, whose soft line breaks (`=` at the end of a 76-character line) cut a link in two
 * for anyone reading the file as it is. `npm run admin -- mail list|show` reads the folder
 * (`outbox-reader.ts`). Files are written under a temporary name and renamed, the `.txt` first, so a
 * reader never sees half a message; names sort by time.
 */
export function createOutboxMailer(folder: string, from: string): Mailer {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  // nodemailer composes the MIME message; the stream transport hands it back instead of sending it.
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    description: `outbox folder ${folder}`,
    async send(mail: OutgoingMail) {
      const date = new Date();
      const info = await composer.sendMail({ from, date, ...mail });
      const base = `${date.toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}`;
      writeAtomically(folder, `${base}.txt`, decodedText(from, mail, date));
      writeAtomically(folder, `${base}.eml`, info.message as Buffer);
    },
    async close() {},
  };
}

/** What a person reads: the headers that matter and the text as composed (UTF-8, lines unbroken). */
export function decodedText(from: string, mail: OutgoingMail, date: Date): string {
  return [
    `From: ${from}`,
    `To: ${mail.to}`,
    `Date: ${date.toISOString()}`,
    `Subject: ${mail.subject}`,
    '',
    mail.text.endsWith('\n') ? mail.text : `${mail.text}\n`,
  ].join('\n');
}

function writeAtomically(folder: string, name: string, content: string | Buffer): void {
  const temporary = path.join(folder, `.${name}.tmp`);
  writeFileSync(temporary, content, { mode: 0o600 });
  renameSync(temporary, path.join(folder, name));
}
