/**
 * Address formats of the sandbox custody (pure): generated in each currency's real format and
 * validated the way a wallet would (checksums included), so clients see realistic addresses.
 * bech32 (BIP 173/350) for btc and ltc, EIP-55 mixed-case hex for eth and usdt, the classic
 * base58 address (with a destination tag as memo) for xrp.
 */
import { createHash, randomBytes } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { base58, base58xrp, bech32, bech32m } from '@scure/base';

const sha256 = (data: Uint8Array): Buffer => createHash('sha256').update(data).digest();

/** Human-readable prefixes of segwit addresses on mainnet (the sandbox imitates mainnet). */
const SEGWIT_HRP: Readonly<Record<string, string>> = { btc: 'bc', ltc: 'ltc' };
/** base58check version bytes of legacy addresses (P2PKH, P2SH). */
const BASE58_VERSIONS: Readonly<Record<string, readonly number[]>> = {
  btc: [0x00, 0x05],
  ltc: [0x30, 0x32, 0x05],
};
const EVM = new Set(['eth', 'usdt']);

export function segwitAddress(hrp: string, program: Uint8Array): string {
  return bech32.encode(hrp, [0, ...bech32.toWords(program)]);
}

function validSegwit(hrp: string, address: string): boolean {
  const lower = address.toLowerCase();
  if (address !== lower && address !== address.toUpperCase()) return false;
  if (!lower.startsWith(`${hrp}1`)) return false;
  for (const codec of [bech32, bech32m]) {
    try {
      const { prefix, words } = codec.decode(lower as `${string}1${string}`);
      if (prefix !== hrp || words.length === 0) continue;
      const version = words[0]!;
      const program = codec.fromWords(words.slice(1));
      if (version === 0 && codec === bech32 && (program.length === 20 || program.length === 32)) return true;
      if (version >= 1 && version <= 16 && codec === bech32m && program.length >= 2 && program.length <= 40)
        return true;
    } catch {
      // not this encoding
    }
  }
  return false;
}

/** ltc's old P2SH version (`3...`): the same script as its `M...` form, which Litecoin Core writes. */
const LTC_OLD_P2SH = 0x05;
const LTC_P2SH = 0x32;

function base58CheckOf(payload: Uint8Array): string {
  const check = sha256(sha256(payload)).subarray(0, 4);
  return base58.encode(new Uint8Array([...payload, ...check]));
}

/** A valid legacy address in the form the coin's node writes it, or undefined. */
function canonicalBase58Check(currency: string, address: string): string | undefined {
  const versions = BASE58_VERSIONS[currency] ?? [];
  try {
    const bytes = base58.decode(address);
    if (bytes.length !== 25 || !versions.includes(bytes[0]!)) return undefined;
    const check = sha256(sha256(bytes.slice(0, 21))).subarray(0, 4);
    if (!Buffer.from(bytes.slice(21)).equals(check)) return undefined;
    if (currency === 'ltc' && bytes[0] === LTC_OLD_P2SH) {
      return base58CheckOf(new Uint8Array([LTC_P2SH, ...bytes.slice(1, 21)]));
    }
    return address;
  } catch {
    return undefined;
  }
}

/** EIP-55: each hex letter upper case when the matching nibble of keccak256(lower-case hex) is >= 8. */
export function eip55(hex40: string): string {
  const lower = hex40.toLowerCase();
  const hash = Buffer.from(keccak_256(new TextEncoder().encode(lower))).toString('hex');
  let out = '';
  for (let i = 0; i < lower.length; i++) {
    const c = lower[i]!;
    out += /[a-f]/.test(c) && Number.parseInt(hash[i]!, 16) >= 8 ? c.toUpperCase() : c;
  }
  return `0x${out}`;
}

function validEvm(address: string): boolean {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return false;
  const body = address.slice(2);
  // All lower or all upper case carries no checksum (EIP-55 allows it); mixed case must match.
  if (body === body.toLowerCase() || body === body.toUpperCase()) return true;
  return eip55(body) === address;
}

export function xrpClassicAddress(accountId: Uint8Array): string {
  const payload = new Uint8Array([0, ...accountId]);
  const check = sha256(sha256(payload)).subarray(0, 4);
  return base58xrp.encode(new Uint8Array([...payload, ...check]));
}

function validXrp(address: string): boolean {
  try {
    const bytes = base58xrp.decode(address);
    if (bytes.length !== 25 || bytes[0] !== 0) return false;
    const check = sha256(sha256(bytes.slice(0, 21))).subarray(0, 4);
    return Buffer.from(bytes.slice(21)).equals(check);
  } catch {
    return false;
  }
}

/** The one classic address of the sandbox's xrp hot wallet; accounts are told apart by destination tag. */
export const SANDBOX_XRP_ADDRESS = xrpClassicAddress(
  sha256(new TextEncoder().encode('sandbox xrp hot wallet')).subarray(0, 20),
);

/** A fresh random address of `currency` (xrp: the shared address; the memo is chosen by the caller). */
export function generateAddress(currency: string): string {
  const hrp = SEGWIT_HRP[currency];
  if (hrp) return segwitAddress(hrp, randomBytes(20));
  if (EVM.has(currency)) return eip55(randomBytes(20).toString('hex'));
  if (currency === 'xrp') return SANDBOX_XRP_ADDRESS;
  return `sbx${randomBytes(20).toString('hex')}`;
}

/**
 * The one spelling of a valid destination, or undefined when `address` is not valid for `currency`
 * (checksum included), the way a node would write it back: bech32 in lower case (upper case is the
 * same address), EVM hex in lower case (EIP-55 case is only a checksum), ltc's old `3...` P2SH form
 * as its `M...` form; base58 addresses are case-sensitive and stay as they are. A legacy address and
 * a bech32 one are different destinations (different scripts) and stay different.
 */
export function canonicalAddress(currency: string, address: string): string | undefined {
  const hrp = SEGWIT_HRP[currency];
  if (hrp) return validSegwit(hrp, address) ? address.toLowerCase() : canonicalBase58Check(currency, address);
  if (EVM.has(currency)) return validEvm(address) ? address.toLowerCase() : undefined;
  if (currency === 'xrp') return validXrp(address) ? address : undefined;
  return /^sbx[0-9a-f]{40}$/.test(address) ? address : undefined;
}

/** True when `address` is well formed for `currency`, checksum included. */
export function isValidAddress(currency: string, address: string): boolean {
  return canonicalAddress(currency, address) !== undefined;
}

/** Whether a currency carries a memo (destination tag) in the sandbox. */
export function usesMemo(currency: string): boolean {
  return currency === 'xrp';
}

/** A transaction id in the currency's usual form. */
export function generateTxid(currency: string): string {
  const hex = randomBytes(32).toString('hex');
  if (EVM.has(currency)) return `0x${hex}`;
  if (currency === 'xrp') return hex.toUpperCase();
  return hex;
}
