import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import type { Sql } from '../../src/db/database.js';
import { registerErrorHandler } from '../../src/http/error-handler.js';
import { ErrorResponse } from '../../src/http/schemas.js';
import { linkRoutes } from '../../src/mail/link-routes.js';
import { ActionLinks, type LinkAction } from '../../src/mail/links.js';
import { newAccount } from '../support/accounts.js';
import type { Target } from '../support/targets.js';

const KEY = Buffer.alloc(32, 7);
const HOUR = 3_600_000;

/** A subject table of the test's own, changed by the handler inside the link's transaction. */
async function subjects(target: Target): Promise<void> {
  await target
    .db()
    .query('CREATE TABLE IF NOT EXISTS link_test_subjects (id serial PRIMARY KEY, state text NOT NULL)');
}

async function newSubject(target: Target): Promise<number> {
  const { rows } = await target
    .db()
    .query<{ id: number }>("INSERT INTO link_test_subjects (state) VALUES ('waiting') RETURNING id");
  return rows[0]!.id;
}

async function stateOf(target: Target, id: number): Promise<string> {
  const { rows } = await target
    .db()
    .query<{ state: string }>('SELECT state FROM link_test_subjects WHERE id = $1', [id]);
  return rows[0]!.state;
}

function linksFor(target: Target, clock: { now: number }, calls: Array<[number, LinkAction]>) {
  const links = new ActionLinks({
    db: target.db(),
    key: KEY,
    publicUrl: 'https://exchange.test/',
    ttlMs: HOUR,
    now: () => clock.now,
  });
  links.handle('test', async (tx: Sql, subjectId, action) => {
    calls.push([subjectId, action]);
    const { rows } = await tx.query<{ id: number }>(
      "UPDATE link_test_subjects SET state = $2 WHERE id = $1 AND state = 'waiting' RETURNING id",
      [subjectId, action === 'confirm' ? 'confirmed' : 'cancelled'],
    );
    return rows.length > 0
      ? { ok: true, message: `${action}ed` }
      : { ok: false, message: 'no longer waiting' };
  });
  return links;
}

function tokenOf(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}

async function issue(target: Target, links: ActionLinks, subjectId: number) {
  const account = await newAccount(target.db());
  return target
    .db()
    .transaction((tx) => links.issue(tx, { purpose: 'test', subjectId, accountId: account.id }));
}

/** Single-use e-mail links, run against PostgreSQL and PGlite. */
export function linksContract(target: Target): void {
  describe(`e-mail action links (${target.name})`, () => {
    it('issues a confirm and a cancel URL under the public URL that expire after the TTL', async () => {
      await subjects(target);
      const clock = { now: Date.UTC(2026, 10, 25, 12) };
      const links = linksFor(target, clock, []);
      const issued = await issue(target, links, await newSubject(target));
      expect(issued.confirmUrl).toMatch(/^https:\/\/exchange\.test\/v3\/links\/[A-Za-z0-9_-]{43}$/);
      expect(issued.cancelUrl).toMatch(/^https:\/\/exchange\.test\/v3\/links\/[A-Za-z0-9_-]{43}$/);
      expect(issued.cancelUrl).not.toBe(issued.confirmUrl);
      expect(issued.expiresAt.getTime()).toBe(clock.now + HOUR);
    });

    it('stores only keyed hashes of the tokens', async () => {
      await subjects(target);
      const links = linksFor(target, { now: Date.now() }, []);
      const issued = await issue(target, links, await newSubject(target));
      const { rows } = await target
        .db()
        .query<{ n: number }>(
          'SELECT count(*)::int AS n FROM action_links WHERE confirm_hash = $1 OR cancel_hash = $1 OR confirm_hash = $2',
          [tokenOf(issued.confirmUrl), tokenOf(issued.cancelUrl)],
        );
      expect(rows[0]!.n).toBe(0);
    });

    it('confirms once: the handler runs, then both links of the pair are used up', async () => {
      await subjects(target);
      const calls: Array<[number, LinkAction]> = [];
      const links = linksFor(target, { now: Date.now() }, calls);
      const id = await newSubject(target);
      const issued = await issue(target, links, id);
      const inspected = await links.inspect(tokenOf(issued.confirmUrl));
      expect(inspected).toMatchObject({
        ok: true,
        action: 'confirm',
        subject: { purpose: 'test', subjectId: id },
      });
      expect(calls).toEqual([]);
      const used = await links.use(tokenOf(issued.confirmUrl));
      expect(used).toMatchObject({ ok: true, action: 'confirm', outcome: { ok: true } });
      expect(await stateOf(target, id)).toBe('confirmed');
      expect(await links.use(tokenOf(issued.confirmUrl))).toEqual({ ok: false, problem: 'used' });
      expect(await links.use(tokenOf(issued.cancelUrl))).toEqual({ ok: false, problem: 'used' });
      expect(await stateOf(target, id)).toBe('confirmed');
      expect(calls).toEqual([[id, 'confirm']]);
    });

    it('refuses forged, malformed and expired tokens without calling the handler', async () => {
      await subjects(target);
      const calls: Array<[number, LinkAction]> = [];
      const clock = { now: Date.now() };
      const links = linksFor(target, clock, calls);
      const id = await newSubject(target);
      const issued = await issue(target, links, id);
      const token = tokenOf(issued.cancelUrl);
      const forged = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
      expect(await links.use(forged)).toEqual({ ok: false, problem: 'unknown' });
      expect(await links.use("x' OR 1=1 --")).toEqual({ ok: false, problem: 'unknown' });
      clock.now += HOUR;
      expect(await links.use(token)).toEqual({ ok: false, problem: 'expired' });
      expect(await links.inspect(token)).toEqual({ ok: false, problem: 'expired' });
      expect(calls).toEqual([]);
      expect(await stateOf(target, id)).toBe('waiting');
    });

    it('leaves the link usable when the handler fails, and kills revoked links', async () => {
      await subjects(target);
      const links = new ActionLinks({
        db: target.db(),
        key: KEY,
        publicUrl: 'http://x',
        ttlMs: HOUR,
        now: Date.now,
      });
      let fail = true;
      links.handle('test', async () => {
        if (fail) throw new Error('database trouble');
        return { ok: true, message: 'done' };
      });
      const id = await newSubject(target);
      const issued = await issue(target, links, id);
      await expect(links.use(tokenOf(issued.confirmUrl))).rejects.toThrow('database trouble');
      fail = false;
      expect(await links.use(tokenOf(issued.confirmUrl))).toMatchObject({ ok: true });
      const other = await issue(target, links, await newSubject(target));
      await target.db().transaction((tx) => links.revoke(tx, 'test', id + 1));
      expect(await links.use(tokenOf(other.confirmUrl))).toEqual({ ok: false, problem: 'used' });
    });

    it('lets exactly one of many concurrent uses of a pair act', async () => {
      await subjects(target);
      const calls: Array<[number, LinkAction]> = [];
      const links = linksFor(target, { now: Date.now() }, calls);
      const id = await newSubject(target);
      const issued = await issue(target, links, id);
      const tokens = Array.from({ length: 12 }, (_, i) =>
        tokenOf(i % 2 === 0 ? issued.confirmUrl : issued.cancelUrl),
      );
      const results = await Promise.all(tokens.map((token) => links.use(token)));
      expect(results.filter((result) => result.ok)).toHaveLength(1);
      expect(results.filter((result) => !result.ok && result.problem === 'used')).toHaveLength(11);
      expect(calls).toHaveLength(1);
      expect(await stateOf(target, id)).toBe(calls[0]![1] === 'confirm' ? 'confirmed' : 'cancelled');
    });

    it('serves a page with a POST form on GET (acting on nothing) and acts on POST', async () => {
      await subjects(target);
      const calls: Array<[number, LinkAction]> = [];
      const links = linksFor(target, { now: Date.now() }, calls);
      const app = Fastify();
      registerErrorHandler(app);
      app.addSchema(ErrorResponse);
      linkRoutes(app as never, links);
      const id = await newSubject(target);
      const issued = await issue(target, links, id);
      const path = new URL(issued.confirmUrl).pathname;
      const page = await app.inject({ method: 'GET', url: path });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.body).toContain('<form method="post"');
      expect(page.body).not.toMatch(/<script/i);
      expect(calls).toEqual([]);
      const done = await app.inject({ method: 'POST', url: path, headers: { accept: 'application/json' } });
      expect(done.statusCode).toBe(200);
      expect(done.json()).toEqual({
        purpose: 'test',
        subject_id: id,
        action: 'confirm',
        ok: true,
        message: 'confirmed',
      });
      const again = await app.inject({ method: 'POST', url: path, headers: { accept: 'application/json' } });
      expect(again.statusCode).toBe(410);
      expect(again.json()).toEqual({
        error: { code: 3301, name: 'link_used', message: 'this link has already been used' },
      });
      const forged = await app.inject({ method: 'POST', url: `/v3/links/${'A'.repeat(43)}` });
      expect(forged.statusCode).toBe(404);
      expect(forged.headers['content-type']).toMatch(/^text\/html/);
      expect(forged.body).toContain('this link is not valid');
      await app.close();
    });
  });
}
