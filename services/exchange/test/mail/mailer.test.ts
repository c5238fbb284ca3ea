import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboxMailer } from '../../src/mail/outbox.js';
import { createSmtpMailer } from '../../src/mail/smtp.js';
import { type SmtpSink, startSmtpSink } from '../support/smtp-sink.js';

const MAIL = {
  to: 'alice@example.com',
  subject: 'Confirm your withdrawal',
  text: 'Confirm: http://127.0.0.1:3100/v3/links/abc\nCancel: http://127.0.0.1:3100/v3/links/def',
};

describe('SMTP mailer against a real SMTP server', () => {
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink({ user: 'mailer', password: 's3cret' });
  });
  afterAll(async () => {
    await sink.close();
  });

  it('delivers the mail with sender, recipient, subject and text, authenticating', async () => {
    const mailer = createSmtpMailer({
      url: sink.url,
      user: 'mailer',
      password: 's3cret',
      requireTls: false,
      tlsRejectUnauthorized: true,
      from: 'Exchange <no-reply@exchange.test>',
    });
    await mailer.send(MAIL);
    await mailer.close();
    const received = await sink.waitFor((mail) => mail.subject === MAIL.subject);
    expect(received.from?.value[0]).toMatchObject({ name: 'Exchange', address: 'no-reply@exchange.test' });
    expect(received.to && !Array.isArray(received.to) ? received.to.text : '').toBe('alice@example.com');
    expect(received.text?.trim()).toBe(MAIL.text);
    expect(mailer.description).toBe(`SMTP server 127.0.0.1:${sink.port}`);
  });

  it('rejects the send when the server refuses the credentials', async () => {
    const mailer = createSmtpMailer({
      url: sink.url,
      user: 'mailer',
      password: 'wrong',
      requireTls: false,
      tlsRejectUnauthorized: true,
      from: 'x@exchange.test',
    });
    await expect(mailer.send({ ...MAIL, subject: 'never' })).rejects.toThrow();
    await mailer.close();
    expect(sink.messages.some((mail) => mail.subject === 'never')).toBe(false);
  });

  it('refuses to send in clear text when TLS is required and the server offers no STARTTLS', async () => {
    const mailer = createSmtpMailer({
      url: sink.url,
      user: 'mailer',
      password: 's3cret',
      requireTls: true,
      tlsRejectUnauthorized: true,
      from: 'x@exchange.test',
    });
    await expect(mailer.send({ ...MAIL, subject: 'clear text' })).rejects.toThrow();
    await mailer.close();
    expect(sink.messages.some((mail) => mail.subject === 'clear text')).toBe(false);
  });
});

describe('outbox mailer', () => {
  it('writes one complete .eml file per mail, readable as a message', async () => {
    const folder = path.join(mkdtempSync(path.join(tmpdir(), 'outbox-test-')), 'outbox');
    const mailer = createOutboxMailer(folder, 'Exchange <no-reply@exchange.test>');
    await mailer.send(MAIL);
    await mailer.send({ ...MAIL, subject: 'Second' });
    const files = readdirSync(folder)
      .filter((name) => name.endsWith('.eml'))
      .sort();
    expect(files).toHaveLength(2);
    expect(files.every((name) => !name.startsWith('.'))).toBe(true);
    // each with its decoded text next to it (outbox-operator.process.test.ts reads them)
    expect(readdirSync(folder).filter((name) => name.endsWith('.txt'))).toHaveLength(2);
    const parsed = await Promise.all(
      files.map((name) => simpleParser(readFileSync(path.join(folder, name)))),
    );
    expect(parsed.map((mail) => mail.subject).sort()).toEqual(['Confirm your withdrawal', 'Second']);
    expect(parsed[0]?.text?.trim()).toBe(MAIL.text);
    expect(mailer.description).toBe(`outbox folder ${folder}`);
  });
});
