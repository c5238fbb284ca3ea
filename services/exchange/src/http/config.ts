import { isIP } from 'node:net';
import { ConfigError } from '../settings/parse.js';

/** `TRUSTED_PROXIES`: addresses, CIDRs and proxy-addr's names, checked here so a typo stops the start. */
export function trustedProxies(env: NodeJS.ProcessEnv): readonly string[] {
  const items = (env.TRUSTED_PROXIES ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  for (const item of items) {
    if (['loopback', 'linklocal', 'uniquelocal'].includes(item)) continue;
    const [address, bits, extra] = item.split('/');
    const family = isIP(address ?? '');
    const bitsOk =
      bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (family === 0 || !bitsOk || extra !== undefined) {
      throw new ConfigError(
        'TRUSTED_PROXIES',
        `expected addresses or CIDRs (or loopback, linklocal, uniquelocal), got "${item}"`,
      );
    }
  }
  return Object.freeze(items);
}
