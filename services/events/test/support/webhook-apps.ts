/** App instances on one PostgreSQL database with webhook settings, each with its own pool and lock connection. */
import type { OpenedStorage } from '../../src/storage/open-store.js';
import { featureSettings, openProductionStorage, startApp, type TestApp } from '../helpers.js';

export interface WebhookApps {
  /** A new instance with `base` settings overridden by `env`. */
  appOn(env?: Record<string, string>): Promise<TestApp>;
  closeAll(): Promise<void>;
}

export function webhookApps(url: () => string, base: Record<string, string>): WebhookApps {
  const storages: OpenedStorage[] = [];
  const apps: TestApp[] = [];
  return {
    async appOn(env = {}) {
      const storage = await openProductionStorage({ kind: 'postgres', url: url(), poolMax: 4 });
      storages.push(storage);
      const app = await startApp({
        store: storage.store,
        features: { sql: storage.sql, settings: featureSettings({ ...base, ...env }), lockUrl: url() },
      });
      apps.push(app);
      return app;
    },
    async closeAll() {
      for (const app of apps) await app.close();
      for (const storage of storages) await storage.store.close();
    },
  };
}
