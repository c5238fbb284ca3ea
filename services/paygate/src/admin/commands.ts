import type { Database } from '@platform/sql-storage/database';
import { deadCallbacks, retryDeadCallback } from '../callbacks/dead-letter.js';
import type { Catalog } from '../catalog/catalog.js';
import { checkGivenSecret, GIVEN_SECRET_RULE, rotateSecret, SecretBook } from '../secrets/book.js';

export const USAGE = `usage: npm run admin -w services/paygate -- <command>
  callbacks dead                              callbacks that used up CALLBACK_MAX_ATTEMPTS, oldest first
  callbacks retry <id>                        puts a dead callback back in the queue (due now, attempts from 0)
  secrets rotate <merchant> [--grace-seconds <n>] [--secret <value>]
                                              a new merchant secret (printed once); the old one is still accepted
                                              on merchant API calls for n seconds (default 86400); callbacks are
                                              signed with the new one from now on. --secret gives the new secret
                                              instead of generating one (${GIVEN_SECRET_RULE};
                                              not printed back)`;

/** A refusal to show the operator (exit code 2). */
export class AdminError extends Error {}

export interface AdminContext {
  readonly db: Database;
  readonly catalog: Catalog;
  readonly now: () => number;
  readonly print: (value: unknown) => void;
}

/** Runs one operator command; returns the exit code. */
export async function runAdmin(argv: readonly string[], ctx: AdminContext): Promise<number> {
  const [command, sub, arg, ...rest] = argv;
  switch (`${command} ${sub}`) {
    case 'callbacks dead':
      ctx.print(await deadCallbacks(ctx.db));
      return 0;
    case 'callbacks retry': {
      if (!arg || !/^[1-9]\d{0,15}$/.test(arg))
        throw new AdminError('name the callback by its id (callbacks dead)');
      if (!(await retryDeadCallback(ctx.db, Number(arg), new Date(ctx.now())))) {
        throw new AdminError(`callback ${arg} is not dead-lettered`);
      }
      ctx.print({ id: Number(arg), requeued: true });
      return 0;
    }
    case 'secrets rotate': {
      const merchant = arg ? ctx.catalog.merchants.get(arg) : undefined;
      if (!merchant) throw new AdminError(`no merchant "${arg ?? ''}"`);
      let graceSeconds = 86_400;
      let given: string | undefined;
      for (let i = 0; i < rest.length; i += 2) {
        const [option, value] = [rest[i], rest[i + 1]];
        if (option === '--grace-seconds') {
          if (!value || !/^\d{1,7}$/.test(value))
            throw new AdminError('--grace-seconds takes a whole number');
          graceSeconds = Number(value);
        } else if (option === '--secret') {
          if (value === undefined)
            throw new AdminError(`--secret takes the new secret (${GIVEN_SECRET_RULE})`);
          given = value;
        } else {
          throw new AdminError(USAGE);
        }
      }
      if (given !== undefined) {
        const current = await new SecretBook(ctx.db, ctx.now).signing(merchant);
        const check = checkGivenSecret(given, current);
        if (!check.ok) throw new AdminError(check.problem);
      }
      const rotated = await rotateSecret(ctx.db, merchant, ctx.now(), graceSeconds * 1_000, given);
      ctx.print({
        merchant: merchant.id,
        // A secret the operator typed is not echoed into terminals and logs again.
        ...(given === undefined ? { secret: rotated.secret } : { secret: '(as given)' }),
        previous_accepted_until: rotated.previousUntil.toISOString(),
      });
      return 0;
    }
    default:
      throw new AdminError(USAGE);
  }
}
