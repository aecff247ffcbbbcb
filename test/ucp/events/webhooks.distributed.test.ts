/**
 * UCP order events on the distributed topology: pricing, promotions and procurement in their own
 * processes, two gateway replicas, Redis and PostgreSQL; the procurement process signs with the
 * key ring the gateways publish (one DATA_DIR).
 */
import { startDistributed } from '../../../harness/distributed.ts';
import { ucpWebhookSuite } from './webhooks.suite.ts';

ucpWebhookSuite('distributed', async () => {
  const sys = await startDistributed({
    label: 'ucp-events',
    env: {
      UCP_PROFILE_ALLOW_INSECURE: 'true',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_BASE_MS: '50',
      WEBHOOK_POLL_INTERVAL_MS: '100',
    },
  });
  return {
    urls: sys.gateways,
    dataDir: sys.env.DATA_DIR as string,
    gql: sys.gql,
    token: sys.token,
    close: () => sys.close(),
  };
});
