import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { OutgoingTransfer } from '../../src/custody/custody.js';
import { SandboxCustody } from '../../src/custody/sandbox.js';
import type { Database } from '../../src/db/database.js';
import { silentLog, type WalletContext } from '../../src/wallet/context.js';
import { processWithdrawals } from '../../src/wallet/withdrawal-sender.js';
import { createWithdrawal, withdrawalById } from '../../src/wallet/withdrawal-store.js';
import { credit, newAccount } from '../support/accounts.js';
import { reference, usePostgresTarget } from '../support/targets.js';
import { expectReconciled } from './support.js';

// Two senders on one database, as two nodes of a cluster whose wallet job moved from one to the other
// while the first was stalled (SIGSTOP, a cut network) in the middle of a round: the first claimed a
// withdrawal (queued -> sending), stalled past the send lease, the second took the request up, found
// no transfer with its tag and sent it. The first must not send it again when it wakes. The sandbox
// custody answers a repeated tag with the first transfer, so each sender's custody counts its calls:
// a node custody (litecoind) would have paid twice.

const target = usePostgresTarget();
const BTC_ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
const LEASE_MS = 200;

/** A sandbox custody that counts the sends it was asked for. */
class CountingCustody extends SandboxCustody {
  readonly sent: string[] = [];
  override async send(currency: string, transfer: OutgoingTransfer): Promise<string> {
    this.sent.push(transfer.tag);
    return super.send(currency, transfer);
  }
}

/** The first sender's database: after its claim commits, it stalls until `wake` is called. */
function stallingAfterClaim(db: Database): { db: Database; stalled: Promise<void>; wake: () => void } {
  let wake = () => {};
  let reached = () => {};
  const woken = new Promise<void>((resolve) => (wake = resolve));
  const stalled = new Promise<void>((resolve) => (reached = resolve));
  const wrapped = Object.create(db) as Database;
  wrapped.transaction = async (work) => {
    const result = await db.transaction(work);
    reached();
    await woken;
    return result;
  };
  return { db: wrapped, stalled, wake };
}

function context(db: Database, custody: CountingCustody): WalletContext {
  return {
    db,
    reference,
    custodyOf: () => custody,
    confirmationsFor: () => 1,
    log: silentLog,
    now: Date.now,
  };
}

/** A funded account's btc withdrawal, queued for sending. */
async function queuedWithdrawal(db: Database) {
  const account = await newAccount(db);
  await credit(db, account.id, 'btc', 10n ** 10n);
  return db.transaction((tx) =>
    createWithdrawal(tx, {
      accountId: account.id,
      currency: 'btc',
      rail: 'crypto',
      destination: BTC_ADDRESS,
      amount: 10n ** 8n,
      fee: 10n ** 5n,
      feeCurrency: 'btc',
      totalAmount: 10n ** 8n + 10n ** 5n,
      status: 'queued',
    }),
  );
}

describe('withdrawal sending across a stalled sender', () => {
  it('a sender that stalled past its lease and was replaced does not send again when it wakes', async () => {
    const db = target.db();
    const withdrawal = await queuedWithdrawal(db);
    const first = stallingAfterClaim(db);
    const firstCustody = new CountingCustody({ db, withdrawalDelayMs: 0 });
    const secondCustody = new CountingCustody({ db, withdrawalDelayMs: 0 });

    const firstRound = processWithdrawals(context(first.db, firstCustody), { sendLeaseMs: LEASE_MS });
    await first.stalled;
    expect((await withdrawalById(db, withdrawal.id))?.status).toBe('sending');
    await sleep(LEASE_MS + 100);
    // The successor's round: the request is `sending` and untouched past the lease.
    await processWithdrawals(context(db, secondCustody), { sendLeaseMs: LEASE_MS });
    expect(secondCustody.sent).toEqual([withdrawal.tag]);
    expect(['sent', 'done']).toContain((await withdrawalById(db, withdrawal.id))?.status);

    first.wake();
    await firstRound;
    expect(firstCustody.sent).toEqual([]);
    expect(['sent', 'done']).toContain((await withdrawalById(db, withdrawal.id))?.status);
    await expectReconciled(db);
  });

  it('a sender whose lease nobody took sends as before after a stall', async () => {
    const db = target.db();
    const withdrawal = await queuedWithdrawal(db);
    const first = stallingAfterClaim(db);
    const custody = new CountingCustody({ db, withdrawalDelayMs: 0 });
    const round = processWithdrawals(context(first.db, custody), { sendLeaseMs: LEASE_MS });
    await first.stalled;
    await sleep(LEASE_MS + 100);
    first.wake();
    await round;
    expect(custody.sent).toEqual([withdrawal.tag]);
    expect(['sent', 'done']).toContain((await withdrawalById(db, withdrawal.id))?.status);
    await expectReconciled(db);
  });
});
