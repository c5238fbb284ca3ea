import type { FastifyInstance } from 'fastify';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Database } from '../db/database.js';
import type { OrderService } from '../orders/service.js';
import type { ClusterConfig } from './config.js';
import { ClusterNode } from './node.js';

/** Seconds a client is told to wait before trying a 503 `unavailable` again (a takeover's length). */
const RETRY_AFTER_S = '1';

/**
 * Makes this app a node of a cluster (src/cluster/): starts the node (leases, followers, the internal
 * channel), answers every 503 with `retry-after`, and hands its markets over when the app closes.
 */
export async function registerCluster(
  app: FastifyInstance,
  options: {
    readonly db: Database;
    readonly orders: OrderService;
    readonly config: ClusterConfig;
    readonly secretBox: SecretBox;
  },
): Promise<ClusterNode> {
  const node = await ClusterNode.start({
    db: options.db,
    orders: options.orders,
    config: options.config,
    key: options.secretBox.deriveKey('cluster-internal-channel'),
    log: {
      info: (details, message) => app.log.info(details, message),
      warn: (details, message) => app.log.warn(details, message),
      error: (details, message) => app.log.error(details, message),
    },
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode === 503 && !reply.hasHeader('retry-after'))
      reply.header('retry-after', RETRY_AFTER_S);
    return payload;
  });
  // Before the order service closes: the markets go to the other nodes with nothing queued here.
  app.addHook('preClose', async () => {
    await node.close();
  });
  return node;
}
