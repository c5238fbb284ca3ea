import { rateLimitConfigToYamlObject } from './convert.js';
import type { RateLimitConfigMessage } from './protos.js';

/**
 * A snapshot from the configuration server as config "files" for the core's loader
 * (`buildConfig` in rules/config-tree.ts), so xDS and file mode share one validator and one set of
 * error messages. The text is JSON, which every YAML parser reads as a flow mapping and in which
 * every string is quoted (no YAML 1.1 surprises such as `value: yes` becoming a boolean). A
 * resource is named by its `name`, else its domain.
 */
export interface SnapshotFile {
  readonly name: string;
  readonly text: string;
}

export function snapshotToConfigFiles(configs: readonly RateLimitConfigMessage[]): SnapshotFile[] {
  return configs.map((config) => ({
    name: config.name || config.domain,
    text: JSON.stringify(rateLimitConfigToYamlObject(config)),
  }));
}
