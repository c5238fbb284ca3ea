import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Mailer, OutgoingMail } from './mailer.js';

/**
 * Writes each mail as an RFC 5322 `.eml` file into a folder (the embedded default: no SMTP server
 * needed for the demo). Files are written under a temporary name and renamed, so a reader never sees
 * half a message; names sort by time.
 */
export function createOutboxMailer(folder: string, from: string): Mailer {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  // nodemailer composes the MIME message; the stream transport hands it back instead of sending it.
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    description: `outbox folder ${folder}`,
    async send(mail: OutgoingMail) {
      const info = await composer.sendMail({ from, ...mail });
      const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`;
      const temporary = path.join(folder, `.${name}.tmp`);
      writeFileSync(temporary, info.message as Buffer, { mode: 0o600 });
      renameSync(temporary, path.join(folder, name));
    },
    async close() {},
  };
}
