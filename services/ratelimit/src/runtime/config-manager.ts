import { existsSync, type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Logger } from 'pino';
import type { AlgorithmSupport } from '../rules/algorithm.js';
import { buildConfig, type ConfigFile, dumpConfig, type RateLimitConfig } from '../rules/config-tree.js';
import type { Counter, StatsRegistry } from '../stats/registry.js';
import { type ReadOptions, readConfigFiles } from './read-files.js';

/**
 * Holds the rule config in force and reloads it from disk (spec "Configuration loading"). A reload
 * is all or nothing: on any error the previous config stays, `config_load_error` is counted and the
 * error logged; on success `config_load_success`. Watching: with `watchRoot` a symlink swap of the
 * runtime root (an event on the root's name in its parent directory); otherwise any write, create,
 * chmod or remove inside the config directory. A directory that disappears is polled for until it
 * comes back.
 */
export interface ConfigManagerOptions extends ReadOptions {
  /** `RUNTIME_ROOT` (watched in its parent directory when `watchRoot`). */
  root: string;
  watchRoot: boolean;
  mergeDomainConfig: boolean;
  /** The algorithms the backend runs; a rule asking for another refuses its file. @default every one */
  algorithmSupport?: AlgorithmSupport | undefined;
  registry: StatsRegistry;
  logger: Logger;
  /** Debounce of file events before a reload. @default 100 */
  debounceMs?: number;
}

export type ConfigListener = (config: RateLimitConfig) => void;

export class ConfigManager {
  private config: RateLimitConfig | undefined;
  private readonly success: Counter;
  private readonly failure: Counter;
  private readonly watchers = new Map<string, FSWatcher>();
  private subdirs: string[] = [];
  private pollTimer: NodeJS.Timeout | undefined;
  private debounceTimer: NodeJS.Timeout | undefined;
  private reloading: Promise<boolean> | undefined;
  private again = false;
  private closed = false;
  private readonly listeners: ConfigListener[] = [];

  constructor(private readonly options: ConfigManagerOptions) {
    this.success = options.registry.counter('ratelimit.service.config_load_success');
    this.failure = options.registry.counter('ratelimit.service.config_load_error');
  }

  /** The config in force, or undefined before the first successful load. */
  current(): RateLimitConfig | undefined {
    return this.config;
  }

  /** The `/rlconfig` listing of the config in force ('' when none). */
  dump(): string {
    return this.config ? dumpConfig(this.config) : '';
  }

  /** Number of domains in force (health: HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED). */
  domainCount(): number {
    return this.config?.domains.size ?? 0;
  }

  onChange(listener: ConfigListener): void {
    this.listeners.push(listener);
  }

  /**
   * Loads rule files held in memory (configuration server mode): all or nothing, counted and logged
   * like a reload from disk. Returns the load error (the previous config stays) or undefined.
   */
  loadFiles(files: readonly ConfigFile[]): string | undefined {
    const built = buildConfig(files, this.options.registry, this.options);
    if (!built.ok) {
      this.failure.inc();
      this.options.logger.error(
        { error: built.error },
        `error loading new configuration from xds: ${built.error}`,
      );
      return built.error;
    }
    this.config = built.config;
    this.success.inc();
    this.options.logger.info(
      { domains: [...built.config.domains.keys()] },
      'successfully loaded new configuration',
    );
    for (const l of this.listeners) l(built.config);
    return undefined;
  }

  /** Reloads now; resolves true when the new config is in force. Concurrent calls coalesce. */
  reload(): Promise<boolean> {
    if (this.reloading) {
      this.again = true;
      return this.reloading;
    }
    this.reloading = this.doReload().finally(() => {
      this.reloading = undefined;
      if (this.again && !this.closed) {
        this.again = false;
        void this.reload();
      }
    });
    return this.reloading;
  }

  private async doReload(): Promise<boolean> {
    const read = await readConfigFiles(this.options);
    if (read.ok) {
      this.subdirs = read.dirs.slice(1);
      this.ensureWatching();
    }
    const built = read.ok ? buildConfig(read.files, this.options.registry, this.options) : read;
    if (!built.ok) {
      this.failure.inc();
      this.options.logger.error(
        { error: built.error },
        `error loading new configuration from runtime: ${built.error}`,
      );
      if (!read.ok) this.ensureWatching();
      return false;
    }
    this.config = built.config;
    this.success.inc();
    this.options.logger.info(
      { domains: [...built.config.domains.keys()] },
      'successfully loaded new configuration',
    );
    for (const l of this.listeners) l(built.config);
    return true;
  }

  private scheduleReload(): void {
    if (this.closed) return;
    clearTimeout(this.debounceTimer);
    this.debounceTimer = setTimeout(() => void this.reload(), this.options.debounceMs ?? 100);
  }

  /**
   * The directories whose events trigger a reload, and the name filter: in symlink-swap mode the
   * root's parent (events on the root's name only); otherwise the config directory and its
   * subdirectories (non-recursive inotify watches, re-armed after every reload, because a
   * recursive fs.watch loses files replaced by rename on Linux).
   */
  private watchTargets(): { dirs: string[]; name: string | undefined } {
    return this.options.watchRoot
      ? { dirs: [dirname(this.options.root)], name: basename(this.options.root) }
      : { dirs: [this.options.configDir, ...this.subdirs], name: undefined };
  }

  private dropWatcher(dir: string): void {
    this.watchers.get(dir)?.close();
    this.watchers.delete(dir);
  }

  /** Starts watching; safe to call again (re-arms after a directory disappeared or appeared). */
  ensureWatching(): void {
    if (this.closed) return;
    const targets = this.watchTargets();
    const main = targets.dirs[0]!;
    for (const dir of [...this.watchers.keys()]) if (!targets.dirs.includes(dir)) this.dropWatcher(dir);
    if (!existsSync(main)) {
      for (const dir of [...this.watchers.keys()]) this.dropWatcher(dir);
      this.pollTimer ??= setInterval(() => {
        if (existsSync(main)) {
          clearInterval(this.pollTimer);
          this.pollTimer = undefined;
          this.ensureWatching();
          this.scheduleReload();
        }
      }, 500);
      this.pollTimer.unref();
      return;
    }
    for (const dir of targets.dirs) {
      if (this.watchers.has(dir)) continue;
      try {
        const watcher = watch(dir, { persistent: false }, (_event, file) => {
          if (targets.name === undefined || file === targets.name) this.scheduleReload();
          if (!existsSync(dir)) {
            this.dropWatcher(dir);
            this.ensureWatching();
          }
        });
        watcher.on('error', () => {
          this.dropWatcher(dir);
          this.scheduleReload();
          this.ensureWatching();
        });
        this.watchers.set(dir, watcher);
      } catch (error) {
        this.options.logger.warn({ err: error, dir }, 'cannot watch a config directory');
      }
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.debounceTimer);
    clearInterval(this.pollTimer);
    for (const dir of [...this.watchers.keys()]) this.dropWatcher(dir);
  }
}
