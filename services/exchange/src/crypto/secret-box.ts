import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Encryption of API secrets at rest: AES-256-GCM under the master key, with the key's public part
 * as associated data so a ciphertext copied onto another key row does not decrypt.
 * Format: `v1:` + base64(iv[12] | tag[16] | ciphertext).
 */
export interface SecretBox {
  seal(plaintext: string, associated: string): string;
  open(box: string, associated: string): string;
  /**
   * A 32-byte key for one purpose (keyed hashes of link tokens, of transfer codes), derived from the
   * master key with HKDF-SHA256, so one master key serves every purpose without reusing a key.
   */
  deriveKey(purpose: string): Buffer;
}

export function createSecretBox(masterKey: Buffer): SecretBox {
  if (masterKey.length !== 32) throw new Error('the master key must be 32 bytes');
  return {
    seal(plaintext, associated) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
      cipher.setAAD(Buffer.from(associated, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `v1:${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
    },
    open(box, associated) {
      if (!box.startsWith('v1:')) throw new Error('unknown secret box version');
      const raw = Buffer.from(box.slice(3), 'base64');
      const decipher = createDecipheriv('aes-256-gcm', masterKey, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(associated, 'utf8'));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
    deriveKey(purpose) {
      return Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), `exchange:${purpose}`, 32));
    },
  };
}
