import { ConfigError } from '../settings/parse.js';

/** Where the master key for encrypting API secrets at rest comes from. */
export type MasterKeySource =
  | { readonly kind: 'value'; readonly key: Buffer }
  | { readonly kind: 'file'; readonly path: string; readonly createIfMissing: boolean };

/** Parses a 32-byte key written as 64 hex digits or as base64. */
export function parseMasterKey(raw: string, setting: string): Buffer {
  const text = raw.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) throw new ConfigError(setting, 'expected 32 bytes as 64 hex digits or base64');
  return key;
}
