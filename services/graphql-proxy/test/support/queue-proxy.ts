import path from 'node:path';
import { type Blog, type ProxyProcess, startBlog, startProxy, tempDir } from './processes.js';
import { type Relay, startRelay } from './relay.js';

/**
 * What the queue tests run against: a SETMODE proxy (no local sync at start) in front of the real
 * blog, with a relay between them when the test must lose requests or answers, all under one
 * temporary folder.
 */
export interface QueueProxy {
  readonly dir: { readonly path: string; remove(): Promise<void> };
  readonly blog: Blog;
  readonly proxy: ProxyProcess;
  /** Stops the proxy, the relay and the blog; the folder stays. */
  stop(): Promise<void>;
  /** `stop()`, then the folder is removed. */
  close(): Promise<void>;
}

export interface QueueProxyOptions {
  /** The proxy's settings besides `UPSTREAM_GRAPHQL_ENDPOINT`, `GRAPHQL_MODE=SETMODE` and `LOCAL_SYNC_ON_START=false`. */
  readonly env?: NodeJS.ProcessEnv;
  /** A relay between the proxy and the blog (`relay.dropRequests`, `relay.dropAnswers`). */
  readonly relay?: boolean;
  /** Where the blog keeps its data, made in the test folder (default `<folder>/blog`). */
  readonly blogDir?: (dir: string) => Promise<string>;
  /** The proxy's base folder's name in the test folder. @default 'proxy' */
  readonly proxyDir?: string;
}

export function startQueueProxy(
  prefix: string,
  options: QueueProxyOptions & { relay: true },
): Promise<QueueProxy & { readonly relay: Relay }>;
export function startQueueProxy(prefix: string, options?: QueueProxyOptions): Promise<QueueProxy>;
export async function startQueueProxy(
  prefix: string,
  options: QueueProxyOptions = {},
): Promise<QueueProxy & { readonly relay?: Relay }> {
  const dir = await tempDir(prefix);
  const started: Array<{ close(): Promise<void> }> = [];
  // Stopped last started first: the proxy before what it calls.
  const stop = async () => {
    for (const part of started.reverse().splice(0)) await part.close();
  };
  try {
    const blog = await startBlog(
      options.blogDir ? await options.blogDir(dir.path) : path.join(dir.path, 'blog'),
    );
    started.push(blog);
    const relay = options.relay ? await startRelay(blog.graphqlUrl) : undefined;
    if (relay) started.push(relay);
    const proxy = await startProxy(path.join(dir.path, options.proxyDir ?? 'proxy'), {
      UPSTREAM_GRAPHQL_ENDPOINT: relay?.url ?? blog.graphqlUrl,
      GRAPHQL_MODE: 'SETMODE',
      LOCAL_SYNC_ON_START: 'false',
      ...options.env,
    });
    started.push(proxy);
    return {
      dir,
      blog,
      proxy,
      ...(relay ? { relay } : {}),
      stop,
      async close() {
        await stop();
        await dir.remove();
      },
    };
  } catch (error) {
    await stop();
    // A folder the test mounted something on cannot go yet: the test's own cleanup unmounts it.
    await dir.remove().catch(() => undefined);
    throw error;
  }
}
