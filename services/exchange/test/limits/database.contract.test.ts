import { useTestDatabase } from '@platform/testkit/fixtures';
import { openStorage } from '../../src/db/open.js';
import { DatabaseLimiter } from '../../src/limits/database-limiter.js';
import { limiterContract } from './limiter.contract.js';

// The database's counters (RATE_LIMITS_STORE=database) keep the limiter contract; the contract's
// "two processes" are two limiters on one database, as two cluster nodes are.
const database = useTestDatabase('exchange_limits_db');

limiterContract('database', async () => {
  const db = await openStorage({ kind: 'postgres', url: database.url, poolSize: 2 });
  const limiter = new DatabaseLimiter(db);
  return {
    limiter,
    stop: async () => {
      await limiter.close();
      await db.close();
    },
  };
});
