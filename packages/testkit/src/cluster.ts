import { type ServiceProcess, startServiceProcess } from './app.js';
import { startTcpFront, type TcpFront } from './front.js';
import { freePort } from './ports.js';
import { servicePid } from './process.js';

/** One node of a cluster started by `startServiceCluster`. */
export interface ClusterNodeProcess {
  /** `NODE_ID` */
  readonly id: string;
  /** Its public URL (changes when restarted). */
  readonly url: string;
  /** Its `NODE_URL` (the internal channel; kept across restarts). */
  readonly nodeUrl: string;
  /** The running process, undefined while stopped. */
  readonly process: ServiceProcess | undefined;
  /** Sends a signal to the service process itself (not the testkit's watchdog): SIGKILL, SIGSTOP, SIGCONT. */
  signal(signal: NodeJS.Signals): void;
  /** Cuts the node's database connections (open ones are reset, new ones refused) until `reconnect`. */
  cutDatabase(): void;
  reconnect(): void;
  /** Starts the node again (after a kill or stop), same id and NODE_URL. */
  start(): Promise<void>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

export interface ServiceCluster {
  readonly nodes: readonly ClusterNodeProcess[];
  close(): Promise<void>;
}

export interface StartClusterOptions {
  /** Nodes to start (`node-1` ... `node-n`). */
  readonly size: number;
  /** The service's entry file (run with `node --import tsx`). */
  readonly entry: string;
  readonly cwd?: string;
  /** PostgreSQL URL of the shared (throw-away) database; each node reaches it through its own `TcpFront`. */
  readonly databaseUrl: string;
  /** Environment of every node (besides DATABASE_URL, NODE_ID, NODE_URL, PORT). */
  readonly env?: NodeJS.ProcessEnv;
  readonly healthPath?: string;
  /** How long one node may take to become healthy. @default 180000 (tsx start-ups on a loaded machine) */
  readonly startTimeoutMs?: number;
  readonly onOutput?: (node: string, text: string) => void;
}

/**
 * Starts `size` processes of a clustered service on free ports over one database (NODE_ID,
 * NODE_URL, DATABASE_URL), each node's database connections through a `TcpFront` the test can cut.
 * The nodes start at the same time (a clustered service must cope with that, as its nodes do when an
 * operator starts them together); the call returns once every one is healthy.
 */
export async function startServiceCluster(options: StartClusterOptions): Promise<ServiceCluster> {
  const target = new URL(options.databaseUrl);
  const nodes: ClusterNodeProcess[] = [];
  const fronts: TcpFront[] = [];
  for (let index = 1; index <= options.size; index += 1) {
    const id = `node-${index}`;
    const front = await startTcpFront();
    fronts.push(front);
    front.target(Number(target.port || 5432));
    const viaFront = new URL(options.databaseUrl);
    viaFront.hostname = '127.0.0.1';
    viaFront.port = String(front.port);
    const nodeUrl = `http://127.0.0.1:${await freePort()}`;
    let proc: ServiceProcess | undefined;
    let pid: number | undefined;
    const node: ClusterNodeProcess = {
      id,
      nodeUrl,
      get url() {
        if (!proc) throw new Error(`${id} is not running`);
        return proc.url;
      },
      get process() {
        return proc;
      },
      signal(signal) {
        if (pid !== undefined) process.kill(pid, signal);
      },
      cutDatabase() {
        front.target(undefined);
      },
      reconnect() {
        front.target(Number(target.port || 5432));
      },
      async start() {
        proc = await startServiceProcess({
          name: id,
          entry: options.entry,
          ...(options.cwd ? { cwd: options.cwd } : {}),
          env: { ...options.env, DATABASE_URL: viaFront.toString(), NODE_ID: id, NODE_URL: nodeUrl },
          port: 0,
          healthPath: options.healthPath ?? '/health',
          timeoutMs: options.startTimeoutMs ?? 180_000,
          ...(options.onOutput ? { onOutput: (text: string) => options.onOutput?.(id, text) } : {}),
        });
        pid = servicePid(proc.pid!);
      },
      async stop() {
        const running = proc;
        proc = undefined;
        pid = undefined;
        await running?.stop();
      },
    };
    nodes.push(node);
  }
  const started = await Promise.allSettled(nodes.map((node) => node.start()));
  const failed = started.find((outcome) => outcome.status === 'rejected');
  if (failed) {
    for (const node of nodes) await node.stop().catch(() => undefined);
    for (const front of fronts) await front.close();
    throw (failed as PromiseRejectedResult).reason;
  }
  return {
    nodes,
    async close() {
      for (const node of nodes) {
        // A stopped (SIGSTOP) node cannot exit on SIGTERM.
        try {
          node.signal('SIGCONT');
        } catch {}
        await node.stop();
      }
      for (const front of fronts) await front.close();
    },
  };
}
