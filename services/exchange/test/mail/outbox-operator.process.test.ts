import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailCommandError, runMailCommand } from '../../src/mail/operator.js';
import { createOutboxMailer } from '../../src/mail/outbox.js';

// The operator tool as a real process (`npm run admin -w services/exchange -- mail ...` runs the same
// entry compiled), on an outbox of its own; the folder holds no database: the mail commands need none.
const serviceDir = fileURLToPath(new URL('../..', import.meta.url));
const cliEntry = path.join(serviceDir, 'src/cli.ts');
mkdirSync(path.join(serviceDir, '.tmp'), { recursive: true });
const dataDir = mkdtempSync(path.join(serviceDir, '.tmp', 'mail-operator-'));
const outbox = path.join(dataDir, 'outbox');
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function admin(...argv: string[]) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', cliEntry, 'mail', ...argv], {
    cwd: serviceDir,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      SMTP_URL: '',
      MAIL_OUTBOX_DIR: '',
      LOG_LEVEL: 'warn',
    },
    encoding: 'utf8',
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

// A link as the exchange mails it (256-bit token): with its label the line is longer than the 76
// characters of a quoted-printable line, so the .eml carries it cut by a soft line break.
const confirmUrl = `http://127.0.0.1:3100/v3/links/${randomBytes(32).toString('base64url')}`;
const cancelUrl = `http://127.0.0.1:3100/v3/links/${randomBytes(32).toString('base64url')}`;

describe('mail a person can read: the outbox and `admin mail list|show`', () => {
  beforeAll(async () => {
    const mailer = createOutboxMailer(outbox, 'Exchange <no-reply@exchange.test>');
    await mailer.send({ to: 'first@example.com', subject: 'First', text: 'Nothing to click.' });
    await mailer.send({
      to: 'demo@example.com',
      subject: 'Confirm your withdrawal of 0.1 BTC (request 7)',
      text: `A withdrawal was requested.\n\nConfirm it: ${confirmUrl}\nCancel it: ${cancelUrl}\n`,
    });
  });

  it('keeps each mail as .eml (links cut by quoted-printable) with its decoded text next to it', () => {
    const files = readdirSync(outbox).sort();
    const eml = files.filter((name) => name.endsWith('.eml'));
    expect(eml).toHaveLength(2);
    expect(files.filter((name) => name.endsWith('.txt'))).toEqual(
      eml.map((name) => name.replace(/\.eml$/, '.txt')),
    );
    const raw = readFileSync(path.join(outbox, eml[1]!), 'utf8');
    expect(raw).not.toContain(confirmUrl); // what a reader of the raw file met: the link split by `=\n`
    const text = readFileSync(path.join(outbox, eml[1]!.replace(/\.eml$/, '.txt')), 'utf8');
    expect(text).toContain('To: demo@example.com\n');
    expect(text).toContain(`Confirm it: ${confirmUrl}\nCancel it: ${cancelUrl}\n`);
  });

  it('`mail list` numbers the mails oldest first with their links whole', () => {
    const run = admin('list');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const mails = JSON.parse(run.stdout) as { n: number; to: string; subject: string; links: string[] }[];
    expect(mails.map((m) => [m.n, m.to, m.subject])).toEqual([
      [1, 'first@example.com', 'First'],
      [2, 'demo@example.com', 'Confirm your withdrawal of 0.1 BTC (request 7)'],
    ]);
    expect(mails[1]?.links).toEqual([confirmUrl, cancelUrl]);
  }, 60_000);

  it('`mail show <n>` prints the decoded mail, each link on one line; through the process', () => {
    const run = admin('show', '2');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Subject: Confirm your withdrawal of 0.1 BTC (request 7)\n');
    expect(run.stdout.split('\n')).toEqual(
      expect.arrayContaining([`Confirm it: ${confirmUrl}`, `Cancel it: ${cancelUrl}`]),
    );
  }, 60_000);

  it('refuses a mail number the outbox does not hold, naming the folder and the range (in-process)', async () => {
    const ctx = { outboxDir: outbox, print: () => {}, write: () => {} };
    await expect(runMailCommand(ctx, ['show', '3'])).rejects.toThrow(
      new MailCommandError(`no mail "3": the outbox ${outbox} holds mails 1 to 2 (or "last")`),
    );
    await expect(runMailCommand({ ...ctx, outboxDir: path.join(dataDir, 'none') }, ['list'])).rejects.toThrow(
      /^no mail in the outbox .*none yet/,
    );
    let shown = '';
    await runMailCommand({ ...ctx, write: (text) => (shown += text) }, ['show', 'last']);
    expect(shown).toContain(`Cancel it: ${cancelUrl}\n`);
  }, 60_000);
});
