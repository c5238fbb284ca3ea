/**
 * Parsing helpers of the settings modules of every feature (the top-level config.ts reads the
 * environment): the shared ones of `@platform/http-edge/env-settings`, whose messages are this
 * service's (`invalid setting NAME: problem`).
 */
export { boolean, ConfigError, integer } from '@platform/http-edge/env-settings';
