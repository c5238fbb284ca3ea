import { createHmac, randomBytes } from 'node:crypto';
import type { Database, Sql } from '../db/database.js';

export type LinkAction = 'confirm' | 'cancel';

/** What a pair of links acts on: a withdrawal, a transfer code, ... of one account. */
export interface LinkSubject {
  /** Names the handler registered with `ActionLinks.handle`, e.g. 'withdrawal' or 'svc_code'. */
  readonly purpose: string;
  readonly subjectId: number;
  readonly accountId: number;
}

export interface IssuedLinks {
  readonly confirmUrl: string;
  readonly cancelUrl: string;
  readonly expiresAt: Date;
}

/** What a handler answers; `message` is shown to the person who followed the link. */
export interface LinkOutcome {
  readonly ok: boolean;
  readonly message: string;
}

/**
 * Applies a confirm or cancel to its subject, inside the transaction that consumes the link, so the
 * link is used up exactly when the subject changed (a handler that throws leaves the link usable).
 */
export type LinkHandler = (tx: Sql, subjectId: number, action: LinkAction) => Promise<LinkOutcome>;

export type LinkProblem = 'unknown' | 'used' | 'expired';

export type LinkLookup =
  | { ok: true; subject: LinkSubject; action: LinkAction; expiresAt: Date }
  | { ok: false; problem: LinkProblem };

export type LinkUse =
  | { ok: true; subject: LinkSubject; action: LinkAction; outcome: LinkOutcome }
  | { ok: false; problem: LinkProblem };

interface LinkRow {
  purpose: string;
  subject_id: string;
  account_id: number;
  confirm_hash: string;
  expires_at: Date | string;
  used_at: Date | string | null;
}

/** Whether a stored link pair can still be used at `nowMs` (pure). */
export function linkState(
  row: { expiresAt: number; usedAt: number | null },
  nowMs: number,
): 'usable' | LinkProblem {
  if (row.usedAt !== null) return 'used';
  return nowMs >= row.expiresAt ? 'expired' : 'usable';
}

/** Tokens are 256 random bits, URL-safe; a syntactically impossible token is refused before any lookup. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export interface ActionLinksOptions {
  readonly db: Database;
  /** Key of the keyed hash under which tokens are stored (derived from the master key). */
  readonly key: Buffer;
  /**
   * Base URL the links in mails point at, e.g. `https://exchange.example.com`; a function is read
   * at each link (the server's own address is known only once it listens).
   */
  readonly publicUrl: string | (() => string);
  readonly ttlMs: number;
  readonly now: () => number;
}

/**
 * Single-use, expiring confirm and cancel links sent by e-mail (withdrawals, transfer codes). A token
 * is a bearer secret: only its keyed hash (HMAC-SHA256) is stored, so a copy of the database does not
 * yield working links. Using either link of a pair uses up both.
 */
export class ActionLinks {
  private readonly handlers = new Map<string, LinkHandler>();

  constructor(private readonly options: ActionLinksOptions) {}

  /** Registers the handler of one purpose (at wiring time). */
  handle(purpose: string, handler: LinkHandler): void {
    if (this.handlers.has(purpose)) throw new Error(`a link handler for "${purpose}" is already registered`);
    this.handlers.set(purpose, handler);
  }

  /**
   * Creates the link pair of `subject` in the caller's transaction (so it exists iff the subject
   * does), valid for the configured time unless `expiresAt` says otherwise.
   */
  async issue(
    tx: Sql,
    subject: LinkSubject,
    expiresAt = new Date(this.options.now() + this.options.ttlMs),
  ): Promise<IssuedLinks> {
    if (!this.handlers.has(subject.purpose)) throw new Error(`no link handler for "${subject.purpose}"`);
    const confirm = randomBytes(32).toString('base64url');
    const cancel = randomBytes(32).toString('base64url');
    await tx.query(
      `INSERT INTO action_links (purpose, subject_id, account_id, confirm_hash, cancel_hash, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        subject.purpose,
        subject.subjectId,
        subject.accountId,
        this.hash(confirm),
        this.hash(cancel),
        expiresAt,
      ],
    );
    const { publicUrl } = this.options;
    const base = (typeof publicUrl === 'string' ? publicUrl : publicUrl()).replace(/\/+$/, '');
    return { confirmUrl: `${base}/v3/links/${confirm}`, cancelUrl: `${base}/v3/links/${cancel}`, expiresAt };
  }

  /** Kills the unused links of a subject settled some other way (cancelled by API, expired). */
  async revoke(tx: Sql, purpose: string, subjectId: number): Promise<void> {
    await tx.query(
      'UPDATE action_links SET used_at = $3 WHERE purpose = $1 AND subject_id = $2 AND used_at IS NULL',
      [purpose, subjectId, new Date(this.options.now())],
    );
  }

  /** What a token would do, without using it (the page a GET shows). */
  async inspect(token: string): Promise<LinkLookup> {
    const found = await this.find(this.options.db, token, false);
    if (!found.ok) return found;
    return { ok: true, subject: found.subject, action: found.action, expiresAt: found.expiresAt };
  }

  /** Uses a token: marks the pair used and runs the purpose's handler, in one transaction. */
  async use(token: string): Promise<LinkUse> {
    return this.options.db.transaction(async (tx) => {
      const found = await this.find(tx, token, true);
      if (!found.ok) return found;
      await tx.query('UPDATE action_links SET used_at = $2, used_action = $3 WHERE id = $1', [
        found.id,
        new Date(this.options.now()),
        found.action,
      ]);
      const handler = this.handlers.get(found.subject.purpose);
      if (!handler) throw new Error(`no link handler for "${found.subject.purpose}"`);
      const outcome = await handler(tx, found.subject.subjectId, found.action);
      return { ok: true, subject: found.subject, action: found.action, outcome };
    });
  }

  private hash(token: string): string {
    return createHmac('sha256', this.options.key).update(token).digest('hex');
  }

  private async find(
    sql: Sql,
    token: string,
    lock: boolean,
  ): Promise<
    | { ok: true; id: string; subject: LinkSubject; action: LinkAction; expiresAt: Date }
    | { ok: false; problem: LinkProblem }
  > {
    if (!TOKEN.test(token)) return { ok: false, problem: 'unknown' };
    const hash = this.hash(token);
    // Two unique indexes answer this; FOR UPDATE makes two concurrent uses of one pair queue, and the
    // second sees used_at set.
    const { rows } = await sql.query<LinkRow & { id: string }>(
      `SELECT id::text, purpose, subject_id::text, account_id, confirm_hash, expires_at, used_at
         FROM action_links WHERE confirm_hash = $1 OR cancel_hash = $1${lock ? ' FOR UPDATE' : ''}`,
      [hash],
    );
    const row = rows[0];
    if (!row) return { ok: false, problem: 'unknown' };
    const expiresAt = new Date(row.expires_at);
    const state = linkState(
      {
        expiresAt: expiresAt.getTime(),
        usedAt: row.used_at === null ? null : new Date(row.used_at).getTime(),
      },
      this.options.now(),
    );
    if (state !== 'usable') return { ok: false, problem: state };
    return {
      ok: true,
      id: row.id,
      subject: { purpose: row.purpose, subjectId: Number(row.subject_id), accountId: row.account_id },
      action: row.confirm_hash === hash ? 'confirm' : 'cancel',
      expiresAt,
    };
  }
}
