/** `TRUSTED_PROXIES`: addresses, CIDRs and proxy-addr's names, checked so a typo stops the start (the gateway reads it too). */
export { trustedProxies } from '@platform/http-edge/env-settings';
