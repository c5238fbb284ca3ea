import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Encryption of API secrets at rest: AES-256-GCM under the master key, with the key's public part
 * as associated data so a ciphertext copied onto another key row does not decrypt.
 * Format: `v1:` + base64(iv[12] | tag[16] | ciphertext).
 */
export interface SecretBox {
  seal(plaintext: string, associated: string): string;
  open(box: string, associated: string): string;
  /**
   * HMAC-SHA256 (hex) of `message` under a key derived from the master key for `purpose` (HKDF-SHA256),
   * to find a secret by its hash without storing it in the clear (transfer codes). The master key
   * itself never leaves the box; each purpose gets its own key.
   */
  keyedHash(purpose: string, message: string): string;
}

export function createSecretBox(masterKey: Buffer): SecretBox {
  if (masterKey.length !== 32) throw new Error('the master key must be 32 bytes');
  const derived = new Map<string, Buffer>();
  const keyFor = (purpose: string): Buffer => {
    let key = derived.get(purpose);
    if (!key) {
      key = Buffer.from(
        hkdfSync('sha256', masterKey, Buffer.alloc(0), `exchange keyed hash: ${purpose}`, 32),
      );
      derived.set(purpose, key);
    }
    return key;
  };
  return {
    keyedHash(purpose, message) {
      return createHmac('sha256', keyFor(purpose)).update(message, 'utf8').digest('hex');
    },
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
  };
}
