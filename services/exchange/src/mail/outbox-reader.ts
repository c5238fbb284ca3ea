import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { simpleParser } from 'mailparser';

/** One mail of the outbox folder as a person reads it: decoded, links whole. */
export interface OutboxMail {
  /** 1 = the oldest mail of the folder; numbers only grow as mails arrive. */
  readonly n: number;
  readonly file: string;
  readonly date: string | null;
  readonly from: string;
  readonly to: string;
  readonly subject: string;
  /** The http(s) links of the text, each whole (quoted-printable decoded). */
  readonly links: readonly string[];
  readonly text: string;
}

/** The `.eml` files of the folder, oldest first (their names start with the time they were written). */
export function outboxFiles(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((name) => name.endsWith('.eml') && !name.startsWith('.'))
    .sort();
}

const LINK = /https?:\/\/[^\s<>"]+/g;

/** The links of a decoded text, without a sentence's closing punctuation. */
export function linksOf(text: string): string[] {
  return [...text.matchAll(LINK)].map((match) => match[0].replace(/[.,;:)]+$/, ''));
}

/** Reads and decodes one `.eml` of the folder (MIME and quoted-printable, by mailparser). */
export async function readOutboxMail(folder: string, n: number): Promise<OutboxMail> {
  const file = outboxFiles(folder)[n - 1];
  if (!file) throw new RangeError(`no mail ${n}`);
  const parsed = await simpleParser(readFileSync(path.join(folder, file)));
  const text = parsed.text ?? '';
  const addresses = (value: typeof parsed.to) =>
    value === undefined ? '' : Array.isArray(value) ? value.map((a) => a.text).join(', ') : value.text;
  return {
    n,
    file,
    date: parsed.date?.toISOString() ?? null,
    from: addresses(parsed.from),
    to: addresses(parsed.to),
    subject: parsed.subject ?? '',
    links: linksOf(text),
    text,
  };
}
