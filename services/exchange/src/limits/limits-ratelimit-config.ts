import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseLimits } from './limits-file.js';
import { ratelimitConfigYaml } from './ratelimit-config.js';

/**
 * Writes the services/ratelimit config of a limits file:
 * `tsx src/limits/limits-ratelimit-config.ts [limits.yaml [out.yaml]]`, by default
 * config/limits.yaml -> config/ratelimit/config/exchange.yaml (the file shipped for the service).
 */
const PACKAGE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SHIPPED_LIMITS = path.join(PACKAGE, 'config', 'limits.yaml');
export const SHIPPED_RATELIMIT_CONFIG = path.join(PACKAGE, 'config', 'ratelimit', 'config', 'exchange.yaml');

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const input = path.resolve(process.argv[2] ?? SHIPPED_LIMITS);
  const output = path.resolve(process.argv[3] ?? SHIPPED_RATELIMIT_CONFIG);
  const parsed = parseLimits(readFileSync(input, 'utf8'));
  if (!parsed.ok) {
    console.error(`${input}: ${parsed.error}`);
    process.exit(1);
  }
  writeFileSync(output, ratelimitConfigYaml(parsed.config, path.relative(PACKAGE, input)));
  console.log(`wrote ${output}`);
}
