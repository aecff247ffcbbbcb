/**
 * The order domain on the distributed topology, on the machine's Redis: two procurement
 * replicas (the gateways call the first) and two gateways, Redis Streams and a fresh Postgres.
 * Operator webhooks (test/webhooks/), ACP order webhooks (test/acp/), MCP (test/mcp/, on two
 * more gateways), then the two-gateway suite (two-gateways.suite.ts; also run on a Redis
 * Cluster in test/cluster/).
 *
 * One layout for the four suites, one after another: each started its own before (11 processes,
 * now 6), and a process's start is most of what these suites cost (2–5 s of CPU each). Its
 * settings are the union of theirs, none of which another suite counts on being absent: the
 * webhook settings and the public origin change only what the webhook suites see, and the rate
 * limit of six tokens (per agent) is on the two gateways only the two-gateway suite sends to as
 * an agent. The MCP suite adds two gateways with the default limit: an MCP session's messages
 * take tokens too, more than six per test. The operator webhooks suite runs first (its endpoint
 * takes every order placed; it disables it after), the two-gateway suite last (it kills the
 * procurement process the gateways call).
 */
import { afterAll } from 'vitest';
import { sharedDistributed } from '../../harness/distributed.ts';
import { ACP_WEBHOOKS_ORIGIN, acpWebhooksSuite } from '../acp/webhooks.distributed.suite.ts';
import { mcpDistributedSuite } from '../mcp/distributed.suite.ts';
import { webhooksDistributedSuite } from '../webhooks/distributed.suite.ts';
import { TWO_GATEWAY_LAYOUT, twoGatewaySuite } from './two-gateways.suite.ts';

const distributed = sharedDistributed({
  ...TWO_GATEWAY_LAYOUT,
  label: 'orderdist',
  // The ACP suite's two replicas.
  procurementOnly: 2,
  env: {
    // The webhook suites' receivers are on loopback, and they wait for retries.
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_BASE_MS: '50',
    WEBHOOK_POLL_INTERVAL_MS: '100',
    // Distributed, the procurement process makes the ACP permalinks: it needs the public origin.
    PUBLIC_BASE_URL: ACP_WEBHOOKS_ORIGIN,
  },
});
const topology = distributed.get;
afterAll(distributed.close, 60_000);

webhooksDistributedSuite(topology);
acpWebhooksSuite(topology);
mcpDistributedSuite(topology);
twoGatewaySuite('Redis', { topology });
