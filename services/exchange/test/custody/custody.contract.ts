import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { type Custody, CustodyRefusal } from '../../src/custody/custody.js';

/** What the contract needs from each implementation's world (a node to mine on, the sandbox's chain). */
export interface CustodyWorld {
  readonly currency: string;
  custody(): Custody;
  /** A valid address that is not the custody's own. */
  externalAddress(): Promise<string>;
  readonly invalidAddresses: readonly string[];
  /** Several spellings of one valid destination and the one the custody answers for all of them. */
  sameDestination(): Promise<{ readonly spellings: readonly string[]; readonly canonical: string }>;
  /** Pays `amount` (decimal text) to `address` from outside; returns the txid. */
  pay(address: string, amount: string): Promise<string>;
  /** Makes the chain `blocks` deeper (node: mines; sandbox: sets confirmations of `txid`). */
  deepen(txid: string, blocks: number): Promise<void>;
}

/** The custody contract, run against the sandbox and a real litecoind. */
export function custodyContract(name: string, world: CustodyWorld): void {
  describe(`custody contract: ${name}`, () => {
    it('gives fresh addresses that it validates, and refuses malformed ones', async () => {
      const custody = world.custody();
      const a = await custody.newAddress(world.currency, 1);
      const b = await custody.newAddress(world.currency, 2);
      expect(a.address === b.address && a.memo === b.memo).toBe(false);
      expect(await custody.validateAddress(world.currency, a.address)).toBe(true);
      expect(await custody.validateAddress(world.currency, await world.externalAddress())).toBe(true);
      for (const bad of world.invalidAddresses) {
        expect(await custody.validateAddress(world.currency, bad), bad).toBe(false);
      }
    });

    it('spells each destination one way (canonicalAddress) and none for an invalid address', async () => {
      const custody = world.custody();
      const own = await custody.newAddress(world.currency, 4);
      expect(await custody.canonicalAddress(world.currency, own.address)).toBe(own.address);
      const { spellings, canonical } = await world.sameDestination();
      for (const spelling of spellings) {
        expect(await custody.canonicalAddress(world.currency, spelling), spelling).toBe(canonical);
      }
      expect(await custody.canonicalAddress(world.currency, canonical)).toBe(canonical);
      for (const bad of world.invalidAddresses) {
        expect(await custody.canonicalAddress(world.currency, bad), bad).toBeUndefined();
      }
    });

    it('lists an incoming transfer with its exact amount and confirmations, and resumes from its cursor', async () => {
      const custody = world.custody();
      const { address } = await custody.newAddress(world.currency, 3);
      const first = await custody.incoming(world.currency, null, 2);
      const txid = await world.pay(address, '0.12345678');
      // A node's wallet learns of a mempool transaction asynchronously (even one paid from another wallet
      // of the same node), so the custody is polled, as the deposit scanner does.
      let page = await custody.incoming(world.currency, first.cursor, 2);
      let seen = page.transfers.find((t) => t.txid === txid && t.address === address);
      for (let attempt = 0; !seen && attempt < 100; attempt += 1) {
        await sleep(100);
        page = await custody.incoming(world.currency, first.cursor, 2);
        seen = page.transfers.find((t) => t.txid === txid && t.address === address);
      }
      expect(seen).toMatchObject({ amount: '0.12345678', confirmations: 0 });
      await world.deepen(txid, 2);
      expect(await custody.confirmations(world.currency, txid)).toBeGreaterThanOrEqual(2);
      // From the last cursor, a transfer already deep enough is not listed again.
      page = await custody.incoming(world.currency, page.cursor, 2);
      const again = await custody.incoming(world.currency, page.cursor, 2);
      expect(again.transfers.some((t) => t.txid === txid)).toBe(false);
    });

    it('sends once per tag and finds the transfer again by its tag', async () => {
      const custody = world.custody();
      const to = await world.externalAddress();
      const tag = `contract-${Date.now()}`;
      const txid = await custody.send(world.currency, { address: to, memo: null, amount: '0.015', tag });
      expect(txid).toMatch(/^(0x)?[0-9a-fA-F]{64}$/);
      expect(await custody.findSent(world.currency, tag)).toBe(txid);
      expect(await custody.findSent(world.currency, `${tag}-other`)).toBeUndefined();
      await world.deepen(txid, 1);
      const confirmations = await custody.confirmations(world.currency, txid);
      expect(confirmations === 'gone' ? -1 : confirmations).toBeGreaterThanOrEqual(0);
    });

    it('refuses a send to an invalid address, and knows no unknown transaction', async () => {
      const custody = world.custody();
      await expect(
        custody.send(world.currency, {
          address: world.invalidAddresses[0]!,
          memo: null,
          amount: '0.01',
          tag: `bad-${Date.now()}`,
        }),
      ).rejects.toBeInstanceOf(CustodyRefusal);
      expect(await custody.confirmations(world.currency, 'ab'.repeat(32))).toBe('gone');
    });
  });
}
