/**
 * The mapping used when `PULLMETRICS_MAPPER_YAML` is not set. It gives the Prometheus names and
 * labels of the spec ("Statistics": default pull-metrics mapping names): per-rule counters with
 * labels `domain`, `key1` (and `key2` for two-level keys), the error counter with `err_type`,
 * the request counter and response time with `grpc_method`, and the config load counters.
 */
const RULE_STATS = ['near_limit', 'over_limit', 'total_hits', 'within_limit', 'shadow_mode'];

function ruleMappings(): string {
  return RULE_STATS.flatMap((stat) => [
    `  - match: "ratelimit.service.rate_limit.*.*.${stat}"`,
    `    name: "ratelimit_service_rate_limit_${stat}"`,
    '    labels:',
    '      domain: "$1"',
    '      key1: "$2"',
    `  - match: "ratelimit.service.rate_limit.*.*.*.${stat}"`,
    `    name: "ratelimit_service_rate_limit_${stat}"`,
    '    labels:',
    '      domain: "$1"',
    '      key1: "$2"',
    '      key2: "$3"',
  ]).join('\n');
}

export const DEFAULT_MAPPING_YAML = `mappings:
${ruleMappings()}
  - match: "ratelimit.service.call.should_rate_limit.*"
    name: "ratelimit_service_should_rate_limit_error"
    match_metric_type: counter
    labels:
      err_type: "$1"
  - match: "ratelimit_server.*.total_requests"
    name: "ratelimit_service_total_requests"
    match_metric_type: counter
    labels:
      grpc_method: "$1"
  - match: "ratelimit_server.*.response_time"
    name: "ratelimit_service_response_time_seconds"
    match_metric_type: observer
    labels:
      grpc_method: "$1"
  - match: "ratelimit.service.config_load_success"
    name: "ratelimit_service_config_load_success"
    match_metric_type: counter
  - match: "ratelimit.service.config_load_error"
    name: "ratelimit_service_config_load_error"
    match_metric_type: counter
`;
