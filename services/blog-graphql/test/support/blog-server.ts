import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { type BlogApp, buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';

/** A blog app over a real socket (a free loopback port), its data in `dir`. */
export interface ListeningBlog {
  readonly app: BlogApp;
  readonly url: string;
}

/** Builds the blog on the data in `dir` and listens; a test that restarts it calls this again. */
export async function listenBlog(dir: string, env: NodeJS.ProcessEnv = {}): Promise<ListeningBlog> {
  const app = await buildApp(
    loadConfig({ BLOG_DATA_DIR: dir, PORT: '0', ...env }),
    pino({ level: 'silent' }),
  );
  await new Promise<void>((resolve) => app.server.listen(0, '127.0.0.1', resolve));
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

/**
 * The blog of a test file: started on a throw-away data folder (`prefix`) before its tests, closed
 * and removed after them. Read `url` inside tests (it is set by `beforeAll`).
 */
export function useBlogServer(prefix: string): { readonly url: string; readonly app: BlogApp } {
  let dir: string | undefined;
  let blog: ListeningBlog | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), prefix));
    blog = await listenBlog(dir);
  });
  afterAll(async () => {
    await blog?.app.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });
  const started = (): ListeningBlog => {
    if (blog === undefined) throw new Error('the blog starts in beforeAll: read it inside a test');
    return blog;
  };
  return {
    get url() {
      return started().url;
    },
    get app() {
      return started().app;
    },
  };
}
