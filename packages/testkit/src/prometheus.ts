import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { requireBinary } from './binaries.js';
import { findListeningPort, httpAnswers } from './listening.js';
import { spawnManaged, waitUntilReady } from './process.js';

/** One scrape job: its name and the `host:port` targets answering `/metrics`. */
export interface ScrapeJob {
  readonly job: string;
  readonly targets: readonly string[];
}

export interface PrometheusServer {
  /** `http://127.0.0.1:<port>`, the bound port. */
  readonly url: string;
  /** The instant query API (`/api/v1/query`): the result vector; a failed query throws. */
  query(promql: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  /** Stops the server and removes its data folder. */
  stop(): Promise<void>;
}

/**
 * A real Prometheus (Debian package `prometheus`) scraping `jobs` every second (rules evaluated as
 * often, from `ruleFiles` globs), storing in a folder of its own, on a port of the kernel's choosing
 * (found by what answers `/-/ready`): nothing is guessed or reused.
 */
export async function startPrometheus(options: {
  readonly jobs: readonly ScrapeJob[];
  readonly ruleFiles?: readonly string[];
}): Promise<PrometheusServer> {
  const binary = requireBinary('prometheus', 'prometheus');
  const dir = await mkdtemp(path.join(tmpdir(), 'testkit-prometheus-'));
  const config = path.join(dir, 'prometheus.yml');
  await writeFile(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      ...(options.ruleFiles?.length
        ? ['rule_files:', ...options.ruleFiles.map((glob) => `  - ${glob}`)]
        : []),
      'scrape_configs:',
      ...options.jobs.flatMap((job) => [
        `  - job_name: ${job.job}`,
        '    metrics_path: /metrics',
        '    static_configs:',
        `      - targets: [${job.targets.map((target) => `'${target}'`).join(', ')}]`,
      ]),
      '',
    ].join('\n'),
  );
  const prometheus = spawnManaged({
    name: 'prometheus',
    command: binary,
    args: [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      '--web.listen-address=127.0.0.1:0',
      '--storage.tsdb.retention.time=1h',
    ],
  });
  let url = '';
  try {
    await waitUntilReady(
      prometheus,
      async () => {
        const port = await findListeningPort(prometheus.pid ?? -1, (p) => httpAnswers(p, '/-/ready'), {
          timeoutMs: 1_000,
        });
        url = `http://127.0.0.1:${port}`;
        return true;
      },
      30_000,
    );
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url,
    async query(promql) {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await response.json()) as {
        status: string;
        error?: string;
        data: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      if (body.status !== 'success') throw new Error(`Prometheus query ${promql} failed: ${body.error}`);
      return body.data.result;
    },
    async stop() {
      await prometheus.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
