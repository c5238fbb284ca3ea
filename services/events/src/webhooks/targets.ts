/**
 * Which URLs a webhook may target (pure). A target must be an absolute http(s) URL with a host and
 * no credentials; unless `WEBHOOK_ALLOW_PRIVATE_TARGETS=true`, it must not reach this machine or a
 * private network (SSRF): only globally routable unicast addresses are allowed. A literal address
 * is refused when the subscription is made; a name is checked on each address it resolves to, at
 * send time (`http-sender.ts`), so a name that later resolves inward is refused too.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { isHttpUrl } from '../domain/event.js';

export const TARGET_URL_MAX_LENGTH = 2_048;

/** Why `address` (an IP literal) may not be a target (`10.0.0.1, a private address`), or undefined when it may. */
export function forbiddenAddress(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const range = parsed.range();
  return range === 'unicast'
    ? undefined
    : `${address}, ${RANGE_WORDS[range] ?? `a non-global (${range}) address`}`;
}

/** ipaddr.js' range names as a reader says them. */
const RANGE_WORDS: Readonly<Record<string, string>> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a unique local address',
  carrierGradeNat: 'a carrier-grade NAT address',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  reserved: 'a reserved address',
};

/** The host of a URL without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

export type TargetCheck = { ok: true; url: URL } | { ok: false; problem: string };

export function checkTargetUrl(text: string, allowPrivate: boolean): TargetCheck {
  if (text.length > TARGET_URL_MAX_LENGTH || !isHttpUrl(text)) {
    return {
      ok: false,
      problem: 'url must be an absolute http(s) URL with a host and no user name or password',
    };
  }
  const url = new URL(text);
  if (url.port === '0')
    return { ok: false, problem: 'url must not have port 0 (no connection can be made to it)' };
  // `localhost.` is `localhost`: a name's final dot only says it is absolute
  const host = hostOf(url).replace(/\.$/, '');
  if (!allowPrivate) {
    if (isIP(host) !== 0) {
      const reason = forbiddenAddress(host);
      if (reason !== undefined)
        return { ok: false, problem: `url must not target a private address: ${reason}` };
    } else if (host === 'localhost' || host.endsWith('.localhost')) {
      return { ok: false, problem: 'url must not target a private address: localhost' };
    }
  }
  return { ok: true, url };
}
