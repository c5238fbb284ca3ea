/**
 * Whether a listen address (`HOST`) only accepts connections from this machine: `localhost`, an
 * address in 127.0.0.0/8, or ::1 (any spelling, IPv4-mapped too). The rule is shared by every
 * service's checks of default secrets (packages/default-secrets), so it lives there.
 */
export { isLoopbackHost } from '@platform/default-secrets/default-secrets';
