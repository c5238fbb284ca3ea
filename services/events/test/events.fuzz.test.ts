/**
 * Every route of the published OpenAPI document fuzzed (issue 18): valid and broken requests, signed
 * with a real token, against a real listener over PostgreSQL. No 5xx, every 4xx in the
 * `{statusCode, message, error}` shape, and refused requests leave the events table as it was.
 * `FUZZ_RUNS` for a longer run, `FUZZ_SEED` to repeat one (see CONTRIBUTING.md).
 */
import { useTestDatabase } from '@platform/testkit/fixtures';
import { digestPool, tableDigest } from '@platform/testkit/fuzz/digest';
import { listOperations, loadOpenApi } from '@platform/testkit/fuzz/openapi';
import { fuzzService } from '@platform/testkit/fuzz/run';
import { fuzzSettings } from '@platform/testkit/fuzz/settings';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hmacToken, openProductionStore, startApp, type TestApp } from './helpers.js';

const db = useTestDatabase('events_fuzz');
let app: TestApp;
let digest: ReturnType<typeof digestPool>;

beforeAll(async () => {
  app = await startApp({ store: await openProductionStore({ kind: 'postgres', url: db.url, poolMax: 4 }) });
  digest = digestPool(db.url);
});
afterAll(async () => {
  await app?.close();
  await app?.store.close();
  await digest?.end();
});

/** 300 requests in `npm test`; FUZZ_RUNS / FUZZ_SEED override (testkit fuzz/settings.ts). */
const settings = fuzzSettings(300);

it(
  'answers every generated request without a 5xx, in its error shape, changing nothing when refusing',
  async () => {
    const doc = await loadOpenApi(app.url);
    const token = await hmacToken('fuzzer', { member: true });
    // The health routes take no input: fuzzing them only thins out the runs left for the others (with
    // them, some seeds made no valid PUT at all).
    const operations = listOperations(doc).filter((operation) => !operation.id.includes(' /health'));
    const errorShape = operations.find((o) => o.id === 'GET /events')?.responses['400'];
    expect(errorShape).toBeDefined();
    const stats = await fuzzService(
      {
        name: 'events',
        baseUrl: app.url,
        operations,
        errorShape: errorShape ?? {},
        sign: (draft, operation) =>
          operation.security.length === 0
            ? draft
            : { ...draft, headers: [...draft.headers, ['authorization', `Bearer ${token}`]] },
        digest: tableDigest(digest.query, ['events', 'event_counts']),
        healthPath: '/health',
      },
      settings,
    );
    // The signed writes reached the handlers: some PUTs were accepted.
    expect(
      stats.byOperation['PUT /events/{eventId}']?.['2xx'] ?? 0,
      `FUZZ_SEED=${settings.seed}`,
    ).toBeGreaterThan(0);
  },
  settings.timeoutMs,
);
