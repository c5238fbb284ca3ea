import { randomBytes } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random alphanumeric token (API public keys and secrets, gateway keys): URL- and form-safe. */
export function randomToken(length: number): string {
  let token = '';
  while (token.length < length) {
    for (const byte of randomBytes(length)) {
      // 248 = 4 * 62: rejecting larger bytes keeps the distribution uniform.
      if (byte < 248 && token.length < length) token += ALPHANUMERIC[byte % 62];
    }
  }
  return token;
}
