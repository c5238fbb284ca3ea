import { parseArgs } from 'node:util';
import {
  type Account,
  type AccountChanges,
  createAccount,
  DuplicateAccountError,
  findAccount,
  listAccounts,
  systemAccountId,
  updateAccount,
} from '../accounts/store.js';
import {
  isScope,
  issueApiKey,
  listApiKeys,
  revokeApiKey,
  SCOPES,
  type Scope,
  setApiKeyEnabled,
  setApiKeyStp,
} from '../apikeys/store.js';
import { runSwitchCommand, SWITCH_USAGE, SwitchCommandError } from '../cancel-all/operator.js';
import { CLUSTER_USAGE, ClusterCommandError, clusterStatus, marketCommand } from '../cluster/operator.js';
import { CODE_USAGE, CodeCommandError, runCodeCommand } from '../codes/operator.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Database } from '../db/database.js';
import type { PaygateClient } from '../fiat/client.js';
import { FIAT_USAGE, FiatCommandError, runFiatCommand } from '../fiat/refunds/cli.js';
import { adjustment } from '../ledger/entry.js';
import { reconcile } from '../ledger/reconcile.js';
import { recordReconcileRun } from '../ledger/reconcile-runs.js';
import { balancesOf, postEntry } from '../ledger/store.js';
import { MAIL_USAGE } from '../mail/operator.js';
import { STP_MODES, type StpMode } from '../matching/types.js';
import { formatAmount, parseAmount, rescale } from '../money/decimal.js';
import type { ReferenceData } from '../reference/load.js';
import { depositCommand, OperatorError } from '../wallet/operator.js';
import type { Wallet } from '../wallet/wallet.js';
import {
  runWithdrawAddressCommand,
  WITHDRAW_ADDRESS_USAGE,
  WithdrawAddressCommandError,
} from '../withdraw-addresses/operator.js';

export interface CliContext {
  readonly db: Database;
  readonly reference: ReferenceData;
  readonly secretBox: SecretBox;
  /** Receives each result as a JSON-serialisable value. */
  readonly print: (value: unknown) => void;
  /** The wallet, for the sandbox deposit commands. */
  readonly wallet?: Wallet;
  /** The payment gateway's client, for `fiat refund`. */
  readonly gateway?: PaygateClient;
}

export const USAGE = `usage: exchange-admin <command>
  account create --email <e-mail> [--svcid <id>] [--two-factor true|false] [--withdraw-confirmation true|false]
  account update <account> [--svcid <id>] [--two-factor true|false] [--withdraw-confirmation true|false]
                 [--announcements true|false] [--withdraw-allowlist-only true|false]
  account list                                  accounts with their balances
  balances <account>                            balances of one account (id, e-mail or svcid)
  balance adjust <account> <currency> <amount> --reason <text>   signed decimal, journalled;
                                 a debit: --amount=-2 or put it after --: ... --reason x -- -2
  key issue <account> [--scopes read,trade,withdraw|withdraw_allowlisted] [--label <text>]   prints the secret once
  key list <account>
  key disable|enable|revoke <public key>
  key update <public key> --stp expire_maker|expire_taker|expire_both|decrement|none|default
                                 the key's self-trade prevention default for orders naming none
  reconcile                                     proves the ledger invariants; exit code 1 on failure
  deposit simulate <currency> <address> <amount> [--memo <m>] [--confirmations <n>]
                                 sandbox custody: an incoming transfer appears; prints its txid
  deposit confirm <txid> --confirmations <n>    sandbox custody: the transfer reaches n confirmations
${CODE_USAGE}
${WITHDRAW_ADDRESS_USAGE}
${SWITCH_USAGE}
${MAIL_USAGE}
${CLUSTER_USAGE}
${FIAT_USAGE}`;

/** A refusal to show the operator; exit code 2. */
export class CliError extends Error {}

/**
 * Runs one capability's operator command and prints its result; that capability's own refusal
 * (`refusal`) becomes a CliError (exit code 2), anything else stays a failure.
 */
async function printed(
  ctx: CliContext,
  refusal: new (message: string) => Error,
  run: () => Promise<unknown>,
): Promise<0> {
  try {
    ctx.print(await run());
  } catch (error) {
    if (error instanceof refusal) throw new CliError(error.message);
    throw error;
  }
  return 0;
}

async function account(ctx: CliContext, ref: string | undefined): Promise<Account> {
  if (!ref) throw new CliError('name the account by id, e-mail or svcid');
  const found = await findAccount(ctx.db, ref);
  if (!found) throw new CliError(`no account "${ref}"`);
  return found;
}

async function balancesView(ctx: CliContext, accountId: number) {
  return (await balancesOf(ctx.db, accountId)).map((balance) => {
    const precision = ctx.reference.ledgerPrecision(balance.currency);
    return {
      currency: balance.currency,
      available: formatAmount(balance.available, precision),
      locked: formatAmount(balance.locked, precision),
    };
  });
}

/** `true`/`false` option values (absent: undefined). */
function flag(raw: string | undefined, name: string): boolean | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new CliError(`${name} takes true or false`);
}

function parseScopes(raw: string | undefined): Scope[] {
  if (raw === undefined) return ['read'];
  const scopes = raw
    .split(',')
    .map((scope) => scope.trim())
    .filter(Boolean);
  for (const scope of scopes) {
    if (!isScope(scope)) throw new CliError(`unknown scope "${scope}" (known: ${SCOPES.join(', ')})`);
  }
  if (scopes.length === 0) throw new CliError('--scopes needs at least one scope');
  if (scopes.includes('withdraw') && scopes.includes('withdraw_allowlisted')) {
    throw new CliError('withdraw_allowlisted is given instead of withdraw, not with it');
  }
  return scopes as Scope[];
}

/** Runs one operator command; returns the process exit code. */
export async function runCli(argv: readonly string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      svcid: { type: 'string' },
      'two-factor': { type: 'string' },
      'withdraw-confirmation': { type: 'string' },
      announcements: { type: 'string' },
      'withdraw-allowlist-only': { type: 'string' },
      scopes: { type: 'string' },
      label: { type: 'string' },
      reason: { type: 'string' },
      amount: { type: 'string' },
      account: { type: 'string' },
      status: { type: 'string' },
      memo: { type: 'string' },
      confirmations: { type: 'string' },
      stp: { type: 'string' },
    },
  });
  const [command, sub, ...rest] = positionals;
  switch (`${command ?? ''} ${sub ?? ''}`.trim()) {
    case 'account create': {
      if (!values.email || !/^[^\s@]+@[^\s@]+$/.test(values.email))
        throw new CliError('--email <e-mail> is required');
      try {
        const created = await ctx.db.transaction((tx) =>
          createAccount(tx, {
            email: values.email!,
            ...(values.svcid ? { svcid: values.svcid } : {}),
            twoFactor: flag(values['two-factor'], '--two-factor') ?? false,
            withdrawConfirmation: flag(values['withdraw-confirmation'], '--withdraw-confirmation') ?? false,
          }),
        );
        ctx.print(created);
      } catch (error) {
        if (error instanceof DuplicateAccountError) throw new CliError(error.message);
        throw error;
      }
      return 0;
    }
    case 'account update': {
      const target = await account(ctx, positionals[2]);
      const changes: AccountChanges = {};
      if (values.svcid) changes.svcid = values.svcid;
      const twoFactor = flag(values['two-factor'], '--two-factor');
      const confirmation = flag(values['withdraw-confirmation'], '--withdraw-confirmation');
      const announcements = flag(values.announcements, '--announcements');
      if (twoFactor !== undefined) changes.twoFactor = twoFactor;
      if (confirmation !== undefined) changes.withdrawConfirmation = confirmation;
      if (announcements !== undefined) changes.announcements = announcements;
      const allowlistOnly = flag(values['withdraw-allowlist-only'], '--withdraw-allowlist-only');
      if (allowlistOnly !== undefined) changes.withdrawAllowlistOnly = allowlistOnly;
      try {
        ctx.print(await updateAccount(ctx.db, target.id, changes));
      } catch (error) {
        if (error instanceof DuplicateAccountError) throw new CliError(error.message);
        throw error;
      }
      return 0;
    }
    case 'account list': {
      const accounts = await listAccounts(ctx.db);
      const rows = [];
      for (const item of accounts) rows.push({ ...item, balances: await balancesView(ctx, item.id) });
      ctx.print(rows);
      return 0;
    }
    case 'balance adjust': {
      const [, currencyCode, positionalAmount] = rest;
      const amountText = values.amount ?? positionalAmount;
      const target = await account(ctx, positionals[2]);
      const currency = currencyCode ? ctx.reference.currency(currencyCode) : undefined;
      if (!currency) throw new CliError(`unknown currency "${currencyCode ?? ''}"`);
      const parsed = parseAmount(amountText ?? '', currency.precision.real);
      if (!parsed.ok) {
        throw new CliError(
          parsed.reason === 'too_many_decimals'
            ? `${currency.code} allows at most ${currency.precision.real} decimals`
            : `amount "${amountText ?? ''}" is not a decimal number`,
        );
      }
      if (!values.reason?.trim())
        throw new CliError('--reason <text> is required: adjustments are journalled');
      const external = await systemAccountId(ctx.db, 'external');
      const minor = rescale(
        parsed.value,
        currency.precision.real,
        ctx.reference.ledgerPrecision(currency.code),
      );
      const built = adjustment(target.id, external, currency.code, minor, values.reason.trim());
      if (!built.ok) throw new CliError(built.detail);
      const posted = await postEntry(ctx.db, built.entry);
      if (!posted.ok) throw new CliError(`refused: ${posted.error} (${posted.detail})`);
      ctx.print({ entryId: posted.entryId, balances: await balancesView(ctx, target.id) });
      return 0;
    }
    case 'key issue': {
      const target = await account(ctx, positionals[2]);
      const issued = await issueApiKey(
        ctx.db,
        ctx.secretBox,
        target.id,
        parseScopes(values.scopes),
        values.label ?? '',
      );
      ctx.print({
        apiKey: issued.key.publicKey,
        apiSecret: issued.secret,
        scopes: issued.key.scopes,
        note: 'the secret is shown only now',
      });
      return 0;
    }
    case 'key list': {
      const target = await account(ctx, positionals[2]);
      ctx.print(await listApiKeys(ctx.db, target.id));
      return 0;
    }
    case 'key update': {
      const publicKey = positionals[2];
      if (!publicKey) throw new CliError('name the key by its public key');
      const mode = values.stp?.trim().toLowerCase();
      if (mode === undefined) throw new CliError('key update needs --stp');
      if (mode !== 'default' && !(STP_MODES as readonly string[]).includes(mode)) {
        throw new CliError(`--stp must be one of ${STP_MODES.join(', ')} or default`);
      }
      const stp = mode === 'default' ? null : (mode as StpMode);
      if (!(await setApiKeyStp(ctx.db, publicKey, stp)))
        throw new CliError(`no unrevoked key "${publicKey}"`);
      ctx.print({ publicKey, stp: stp ?? 'expire_maker (default)' });
      return 0;
    }
    case 'key disable':
    case 'key enable':
    case 'key revoke': {
      const publicKey = positionals[2];
      if (!publicKey) throw new CliError('name the key by its public key');
      const done =
        sub === 'revoke'
          ? await revokeApiKey(ctx.db, publicKey)
          : await setApiKeyEnabled(ctx.db, publicKey, sub === 'enable');
      if (!done) throw new CliError(`no ${sub === 'revoke' ? '' : 'unrevoked '}key "${publicKey}"`);
      ctx.print({ publicKey, action: sub });
      return 0;
    }
    case 'deposit simulate':
    case 'deposit confirm': {
      const wallet = ctx.wallet;
      if (!wallet) throw new CliError('the wallet is not available');
      return printed(ctx, OperatorError, () =>
        depositCommand({ db: ctx.db, reference: ctx.reference, wallet }, [sub!, ...rest], {
          memo: values.memo,
          confirmations: values.confirmations,
        }),
      );
    }
    case 'cluster status':
      ctx.print(await clusterStatus(ctx.db));
      return 0;
    case 'market move':
    case 'market pin':
      return printed(ctx, ClusterCommandError, () =>
        marketCommand(ctx.db, sub as 'move' | 'pin', rest[0], rest[1]),
      );
    default:
      if (command === 'balances') {
        const target = await account(ctx, sub);
        ctx.print({ account: target.id, email: target.email, balances: await balancesView(ctx, target.id) });
        return 0;
      }
      if (command === 'fiat')
        return printed(ctx, FiatCommandError, () =>
          runFiatCommand({ ...ctx, gateway: ctx.gateway }, sub, positionals[2]),
        );
      if (command === 'code')
        return printed(ctx, CodeCommandError, () => runCodeCommand(ctx, sub, positionals[2], values));
      if (command === 'withdraw-address')
        return printed(ctx, WithdrawAddressCommandError, () =>
          runWithdrawAddressCommand(ctx, sub, positionals[2]),
        );
      if (command === 'switch')
        return printed(ctx, SwitchCommandError, () => runSwitchCommand(ctx, sub, positionals[2]));
      if (command === 'reconcile') {
        const report = await reconcile(ctx.db);
        await recordReconcileRun(ctx.db, report);
        ctx.print(report);
        return report.ok ? 0 : 1;
      }
      throw new CliError(USAGE);
  }
}
