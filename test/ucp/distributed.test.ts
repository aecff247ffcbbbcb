/**
 * UCP on the distributed topology: pricing, promotions and procurement in their own processes,
 * two gateway replicas (consecutive calls alternate between them), Redis and PostgreSQL; the
 * procurement process signs events with the key ring the gateways publish (one DATA_DIR).
 *
 * One topology for the four suites, one after another: each started its own before, and a
 * topology's start is most of what these suites cost (5 processes, ~16 s of CPU; issue 29's suite
 * time, README "How long it takes"). Each suite's platforms, keys and sessions are its own, and
 * the events suite runs last, so no earlier suite's orders reach its receivers.
 */
import { afterAll } from 'vitest';
import { sharedDistributed } from '../../harness/distributed.ts';
import { ucpCheckoutSuite } from './checkout.suite.ts';
import { ucpWebhookSuite } from './events/webhooks.suite.ts';
import { ucpMcpSuite } from './mcp/mcp.distributed.suite.ts';
import { ucpSignatureSuite } from './signature.distributed.suite.ts';

const distributed = sharedDistributed({
  label: 'ucp',
  env: {
    UCP_PROFILE_ALLOW_INSECURE: 'true',
    // The events suite's receivers are on loopback, and it waits for retries.
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_BASE_MS: '50',
    WEBHOOK_POLL_INTERVAL_MS: '100',
  },
});
const topology = distributed.get;
afterAll(distributed.close, 60_000);

/** The shared topology as a suite's system; the suite's close leaves it running. */
const shared = async () => {
  const sys = await topology();
  return {
    urls: sys.gateways,
    dataDir: sys.env.DATA_DIR as string,
    gql: sys.gql,
    token: sys.token,
    close: async () => {},
  };
};

ucpCheckoutSuite('distributed', shared);
ucpSignatureSuite(topology);
ucpMcpSuite(topology);
ucpWebhookSuite('distributed', shared);
