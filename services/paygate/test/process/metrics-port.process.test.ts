import path from 'node:path';
import { startOnHeldMetricsPort } from '@platform/testkit/start-failure';
import { expect, it } from 'vitest';

// Issue 41: a second service of one kind on a machine failed at start on its metrics listener with
// `listen EADDRINUSE 127.0.0.1:<port>` inside an uncaught stack trace. Now one line names the
// setting, and the process exits 1.
it('on a METRICS_PORT in use, stops with one line naming the setting, no stack trace', async () => {
  const root = path.resolve(import.meta.dirname, '../..');
  const { got, expected } = await startOnHeldMetricsPort('paygate', root, { DATABASE_URL: '' });
  expect(got).toEqual(expected);
}, 150_000);
